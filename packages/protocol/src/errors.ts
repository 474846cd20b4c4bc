// The closed error-code catalog shared by the server (one error handler maps a code to its status and
// envelope) and the SDK (typed `code` on its errors). The OpenAPI document lists it from here.
//
// Status choices where the interface leaves room:
// - 404 only for the resource the *path* names (order, session, merchant, proof). A reference inside
//   a request body that does not resolve (a chain, token or wallet for a chain/token) is a 400
//   validation/business error: the caller must change the body, not the URL.
// - `merchant_mismatch` is 403: the credential is valid but not for the merchant named in the body.
//   It is returned whether or not that other merchant exists, so it reveals nothing about it.
// - Every authentication failure on merchant routes is 401 (interface §Authentication rule 3),
//   including a reused nonce (`replay_detected`, message exactly "Replay request detected").
// - `config_invalid` is 500: only an operator can fix it; the CLI uses the same code at startup.

/** One catalog entry: default HTTP status, description (OpenAPI), and a fixed message if the contract pins one. */
type CatalogEntry = { readonly status: number; readonly description: string; readonly message?: string };

/**
 * Every error code with its default HTTP status and a one-line description.
 *
 * @example ERROR_CATALOG.replay_detected.status // => 401
 */
export const ERROR_CATALOG = {
  // Request shape (any route)
  invalid_request: { status: 400, description: 'A field is missing, malformed or not allowed; `param` names it.' },
  invalid_json: { status: 400, description: 'The request body is not valid JSON or not a JSON object.' },
  not_found: { status: 404, description: 'No route matches this method and path.' },
  method_not_allowed: { status: 405, description: 'The path exists but does not accept this HTTP method.' },
  payload_too_large: { status: 413, description: 'The request body exceeds the size limit.' },
  unsupported_media_type: { status: 415, description: 'The request body is not `application/json`.' },
  rate_limited: { status: 429, description: 'Too many requests; retry after the `Retry-After` header.' },

  // Merchant authentication (routes under /api/v1)
  api_key_invalid: { status: 401, description: '`X-API-Key` is missing or not a key of this environment.' },
  api_key_revoked: { status: 401, description: 'The API key was revoked; use a current key.' },
  timestamp_missing: { status: 401, description: '`X-Timestamp` is missing or not decimal Unix seconds.' },
  timestamp_out_of_window: { status: 401, description: '`X-Timestamp` differs from server time by more than 300 seconds.' },
  nonce_missing: { status: 401, description: '`X-Nonce` is missing.' },
  nonce_invalid: { status: 401, description: '`X-Nonce` is not 8 to 128 bytes long after trimming.' },
  replay_detected: {
    status: 401,
    description: 'The nonce was already used; generate fresh authentication headers for every attempt.',
    message: 'Replay request detected',
  },
  signature_missing: { status: 401, description: '`X-Sign` is missing.' },
  invalid_signature: { status: 401, description: '`X-Sign` does not match the canonical request signature.' },
  merchant_mismatch: { status: 403, description: 'The `merchant_id` in the request is not the merchant of the API key.' },

  // Operator routes (/admin/v1)
  unauthorized: { status: 401, description: 'The admin bearer token is missing or wrong.' },
  forbidden: { status: 403, description: 'The caller is not authorized for this operation.' },

  // Merchants and their configuration
  merchant_not_found: { status: 404, description: 'No merchant with this ID in this environment.' },
  merchant_already_exists: { status: 409, description: 'A merchant with this `merchant_id` already exists.' },
  api_key_not_found: { status: 404, description: 'No API key with this value for this merchant.' },
  api_key_limit: { status: 400, description: 'The merchant already has the maximum number of active API keys; revoke one first.' },
  wallet_not_found: { status: 400, description: 'The merchant has no receiving wallet for this chain and token.' },
  chain_not_supported: { status: 400, description: 'The chain is not configured in this environment.' },
  token_not_supported: { status: 400, description: 'The token symbol is not configured for this chain.' },
  webhook_endpoint_limit: { status: 400, description: 'The merchant already has the maximum number of webhook endpoints.' },
  webhook_endpoint_not_found: { status: 404, description: 'No webhook endpoint with this ID for this merchant.' },
  webhook_endpoint_disabled: { status: 409, description: 'The webhook endpoint is disabled; enable it before redelivering to it.' },
  webhook_url_not_allowed: {
    status: 400,
    description: 'The webhook URL is not allowed here: production endpoints must be https and resolve only to public addresses.',
  },
  delivery_not_found: { status: 404, description: 'No webhook delivery with this ID for this merchant.' },
  return_url_not_allowed: { status: 400, description: 'A success/cancel URL is not on the merchant return-URL allowlist.' },

  // Orders
  invalid_amount: { status: 400, description: 'The amount is not a positive integer (smallest unit) or decimal string in range.' },
  insufficient_fee_balance: { status: 400, description: 'The merchant fee balance cannot cover the fee reserve of a new order.' },
  order_already_exists: {
    status: 409,
    description: 'An order with this `dapp_order_id` already exists; returned only with `recover_existing_order` and the same terms.',
  },
  order_conflict: {
    status: 409,
    description: 'A live order with the same payer, pay-to, token and amount exists; the message names it: cancel it or await its expiry.',
  },
  order_not_found: { status: 404, description: 'No order with this ID for this merchant.' },
  order_not_cancellable: { status: 400, description: 'The order is not in CHECKOUT_VERIFIED; the message names its current state.' },
  card_order_not_cancellable: { status: 400, description: 'Card-processor orders cannot be cancelled through this endpoint.' },
  proof_not_available: { status: 404, description: 'The order has no confirmed payment yet, so there is no proof.' },

  // Checkout sessions
  client_reference_id_conflict: { status: 409, description: 'This merchant already used this `client_reference_id`.' },
  delegate_checkout_unsupported: {
    status: 400,
    description: 'Checkout sessions are DIRECT; a DELEGATE payment is an order with `callback_calldata` (docs/migrating.md).',
  },
  session_not_found: { status: 404, description: 'No checkout session with this ID.' },
  session_expired: { status: 410, description: 'The checkout session expired; start no new payment on it.' },
  session_not_payable: {
    status: 410,
    description: 'The checkout session is cancelled, completed or too close to expiry to start a payment.',
  },
  session_already_bound: { status: 409, description: 'The session is bound to a different payer or token while its order is live.' },
  rail_not_enabled: {
    status: 400,
    description: 'The payment rail is not available: fiat needs the card rail; a card-only session takes no crypto.',
  },

  // Machine payments (/mpp/v1)
  challenge_expired: { status: 401, description: 'The machine-payment challenge expired.' },
  challenge_already_consumed: { status: 401, description: 'The machine-payment challenge was already used.' },
  payer_mismatch: { status: 401, description: 'The payer does not match the challenge.' },
  payer_proof_required: { status: 401, description: 'The challenge names no payer and the credential does not prove control of the paying address.' },
  payer_proof_invalid: { status: 401, description: "The credential's `payload.signature` is not the `source` address's EIP-712 proof over this challenge." },
  invalid_mac: { status: 401, description: 'The challenge MAC does not verify.' },
  tx_already_claimed: { status: 409, description: 'The transfer is spent: claimed by another challenge, an order or a settlement, or a live order outranks it.' },

  // Server side
  internal_error: { status: 500, description: 'An unexpected server error; report the `request_id`.' },
  config_invalid: { status: 500, description: 'The server configuration is invalid; an operator must fix it.' },
  service_unavailable: { status: 503, description: 'The service is temporarily unavailable; retry later.' },

  // Transport (issue 12 input hardening): answers given before any route runs
  request_timeout: { status: 408, description: 'The request (its headers or body) did not arrive in time; the connection is closed.' },
  headers_too_large: { status: 431, description: 'The request headers exceed the size limit; the connection is closed.' },
  // Attribution (docs/attribution.md)
  zero_from_address: { status: 400, description: '`from_address` is the zero address; transfers from it are token mints, not payments.' },
  no_payment_to_accept: { status: 409, description: 'The order has no recorded late or under-payment that can still be accepted.' },
  payment_not_final: { status: 409, description: 'The recorded payment has not reached finality yet; accept it once it has.' },
  // machine payments
  route_not_priced: { status: 404, description: 'The merchant has no price for this machine-paid route.' },
  challenge_not_found: { status: 404, description: 'No machine-payment challenge with this ID.' },
  transfer_not_found: { status: 400, description: 'The mined transaction holds no matching transfer (token, payer, recipient, amount, time).' },
  // DELEGATE mode (docs/delegate.md)
  callback_not_registered: { status: 400, description: '`callback_calldata` was sent but the merchant has no callback contract registered on this chain.' },
  delegate_not_enabled: { status: 400, description: 'DELEGATE settlement is not set up on this chain (no settlement contract or no executor key).' },
  adapter_no_code: { status: 400, description: 'No contract code at `callback_contract` on this chain: deploy the adapter first.' },
  adapter_domain_missing: { status: 400, description: 'The adapter has no EIP-5267 `eip712Domain()`: the settlement contract cannot verify calldata for it.' },
  adapter_domain_mismatch: { status: 400, description: "The adapter's `eip712Domain()` differs from the registration; the message names the field." },
  invalid_calldata_signature: { status: 400, description: "The signature does not recover to the order's `from_address` for its `calldata_sign_request`." },
  calldata_signature_expired: { status: 400, description: "The `deadline` of the order's `calldata_sign_request` has passed." },
  calldata_signature_exists: { status: 409, description: 'A different calldata signature was already submitted for this order.' },
  invalid_authorization: { status: 400, description: 'The EIP-3009 authorization does not pay this order or challenge (payer, recipient, amount, nonce, window, signature).' },
  order_not_refundable: { status: 409, description: 'Not refundable now: not paid, already fully refunded, or (DELEGATE) not FAILED with pooled funds; see the message.' },
  authorization_used: { status: 409, description: 'The EIP-3009 nonce is used or canceled, or another authorization was relayed for the order or challenge.' },
  order_not_payable: { status: 409, description: 'The order no longer awaits payment (paid, settled, failed, expired or cancelled); the message names its state.' },

  // Hosted quick-pay (issue 18): products, payment links, quick-pay sessions
  product_not_found: { status: 404, description: 'No product with this ID for this merchant.' },
  link_not_found: { status: 404, description: 'No payment link with this ID.' },
  link_inactive: { status: 410, description: 'The payment link was deactivated by the merchant; it takes no new payment.' },
  link_expired: { status: 410, description: 'The payment link is past its expiry; it takes no new payment.' },
  link_sold_out: { status: 410, description: 'The payment link reached its payment limit or its product is out of stock.' },
  amount_out_of_range: { status: 400, description: 'The amount of an any-amount payment is below the link minimum or above its maximum.' },
  quickpay_hold_limit: { status: 429, description: 'This address already holds the most unpaid sessions of this limited link or product; pay one or let one lapse.' },
  idempotency_key_conflict: { status: 409, description: 'The idempotency key was already used for a different quick-pay request on this link.' },
  quickpay_session_not_found: { status: 404, description: 'No quick-pay session with this ID.' },
  // merchant portal (docs/portal.md)
  login_failed: { status: 401, description: 'The email and password (or the admin token) do not match; the message does not say which.' },
  portal_session_required: { status: 401, description: 'No portal session: the session cookie is missing, expired or signed out; sign in again.' },
  csrf_token_invalid: { status: 403, description: "An unsafe portal request without the session's `X-CSRF-Token` header, or with a wrong one." },
  invitation_not_usable: { status: 410, description: 'The invitation link is unknown, expired or already used; ask the owner for a new one.' },
  portal_user_exists: { status: 409, description: 'A portal user with this email already exists.' },
  auth_busy: { status: 429, description: 'The server is checking as many passwords as it allows at once; retry after the `Retry-After` header (a second).' },
  password_incorrect: { status: 403, description: 'The current password given to change the password is wrong (counted like a failed sign-in).' },
  totp_required: { status: 401, description: 'The password is right and the account has a second factor: sign in again with its code or a recovery code.' },
  totp_code_invalid: { status: 400, description: 'The authenticator code does not match, or was already used; codes change every 30 seconds.' },
  totp_enrollment_required: { status: 403, description: 'The merchant requires a second factor: this session may only set one up first.' },
  totp_required_by_merchant: { status: 409, description: 'The merchant requires a second factor of every user: it cannot be turned off.' },
  reset_link_not_usable: { status: 410, description: 'The password reset link is unknown, expired or already used; ask for a new one.' },
  password_reset_unavailable: { status: 403, description: 'Self-service password reset needs SMTP settings; ask the operator for a reset link instead.' },
  portal_user_not_found: { status: 404, description: 'No portal user with this email.' },
  // Card rail (docs/card-payments.md)
  card_processor_unavailable: { status: 503, description: 'No card processor is configured, or the processor could not be reached; retry later.' },
  card_payment_active: { status: 409, description: 'A crypto payment is live for this checkout session, so a card payment cannot start (or the reverse).' },
  card_order_not_refundable: { status: 400, description: 'Not a card order with a succeeded payment, or already fully refunded; the message says which.' },
  refund_exceeds_payment: { status: 400, description: 'The refund amount is larger than what remains unrefunded on the order.' },
  partial_refund_not_supported: { status: 400, description: 'A DELEGATE refund returns the whole pooled payment: omit `amount` (or send the whole amount).' },
  refund_not_supported: { status: 400, description: 'Tollgate takes no refunds of this kind of order (e.g. Solana); refund the payer from your own wallet.' },
  card_hold_not_found: { status: 409, description: 'The order is not held for this reason.' },
  invalid_processor_signature: { status: 400, description: 'The card-processor notification failed its signature check (tampered, stale, or signed with another secret).' },
} as const satisfies Record<string, CatalogEntry>;

/** A machine-readable error code; the list is closed. */
export type ErrorCode = keyof typeof ERROR_CATALOG;

/**
 * Code → default HTTP status, derived from {@link ERROR_CATALOG} so the two cannot drift.
 *
 * @example ERROR_CODES.order_already_exists // => 409
 */
export const ERROR_CODES = Object.freeze(Object.fromEntries(Object.entries(ERROR_CATALOG).map(([code, e]) => [code, e.status]))) as { readonly [K in ErrorCode]: (typeof ERROR_CATALOG)[K]['status'] };

/** The body of every error response (docs/errors.md). `error` stays a plain message string. */
export type ErrorEnvelope = {
  error: string;
  code: ErrorCode;
  /** The request field at fault, when there is one. */
  param?: string;
  request_id: string;
};

/** @example isErrorCode('order_not_found') // => true */
export function isErrorCode(s: unknown): s is ErrorCode {
  return typeof s === 'string' && Object.hasOwn(ERROR_CATALOG, s);
}

/** @example errorStatus('session_expired') // => 410 */
export function errorStatus(code: ErrorCode): number {
  return ERROR_CATALOG[code].status;
}

/**
 * Builds an error envelope. A code whose message the contract fixes (`replay_detected`) always uses
 * that message, since clients match on it; otherwise `message` defaults to the description.
 *
 * @example
 * errorEnvelope({ code: 'invalid_request', message: 'amount_wei must be an integer string', param: 'amount_wei', requestId: 'req_9x' })
 * // => { error: 'amount_wei must be an integer string', code: 'invalid_request', param: 'amount_wei', request_id: 'req_9x' }
 */
export function errorEnvelope(opts: { code: ErrorCode; message?: string; param?: string; requestId: string }): ErrorEnvelope {
  const entry: CatalogEntry = ERROR_CATALOG[opts.code];
  const env: ErrorEnvelope = {
    error: entry.message ?? opts.message ?? entry.description,
    code: opts.code,
    request_id: opts.requestId,
  };
  if (opts.param !== undefined) env.param = opts.param;
  return env;
}

/**
 * Whether a parsed response body is an error envelope with a known code; the SDK uses it before
 * trusting `code` (an unknown code from a newer server is not an {@link ErrorCode} of this build).
 *
 * @example isErrorEnvelope(JSON.parse(text)) // => true for { error, code: 'order_not_found', request_id }
 */
export function isErrorEnvelope(v: unknown): v is ErrorEnvelope {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.error === 'string' && isErrorCode(o.code) && typeof o.request_id === 'string' && (o.param === undefined || typeof o.param === 'string');
}
