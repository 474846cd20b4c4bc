import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_CATALOG, ERROR_CODES, errorEnvelope, errorStatus, isErrorCode, isErrorEnvelope, type ErrorCode } from '../../src/index.ts';

// Every code of the wire Tollgate is compatible with (docs/migrating.md), with the status fixed for it.
const FROM_WIRE: Record<string, number> = {
  invalid_request: 400,
  invalid_signature: 401,
  timestamp_out_of_window: 401,
  nonce_missing: 401,
  replay_detected: 401,
  merchant_not_found: 404,
  token_not_supported: 400,
  order_already_exists: 409,
  order_not_found: 404,
  order_not_cancellable: 400,
  card_order_not_cancellable: 400,
  insufficient_fee_balance: 400,
  client_reference_id_conflict: 409,
  session_expired: 410,
  session_already_bound: 409,
  return_url_not_allowed: 400,
  rate_limited: 429,
  service_unavailable: 503,
  proof_not_available: 404,
  tx_already_claimed: 409,
  challenge_expired: 401,
  challenge_already_consumed: 401,
  payer_mismatch: 401,
  invalid_mac: 401,
  // machine payments (docs/machine-payments.md)
  route_not_priced: 404,
  transfer_not_found: 400,
};

// The codes the server needs beyond that wire, with the statuses chosen for them.
const ADDED: Record<string, number> = {
  quickpay_hold_limit: 429,
  partial_refund_not_supported: 400,
  refund_not_supported: 400,
  totp_required: 401,
  totp_code_invalid: 400,
  totp_enrollment_required: 403,
  totp_required_by_merchant: 409,
  reset_link_not_usable: 410,
  password_reset_unavailable: 403,
  portal_user_not_found: 404,
  challenge_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  api_key_invalid: 401,
  api_key_revoked: 401,
  timestamp_missing: 401,
  nonce_invalid: 401,
  signature_missing: 401,
  wallet_not_found: 400,
  chain_not_supported: 400,
  invalid_amount: 400,
  merchant_mismatch: 403,
  order_conflict: 409,
  session_not_found: 404,
  session_not_payable: 410,
  rail_not_enabled: 400,
  internal_error: 500,
  webhook_endpoint_limit: 400,
  webhook_endpoint_not_found: 404,
  webhook_endpoint_disabled: 409,
  webhook_url_not_allowed: 400,
  delivery_not_found: 404,
  config_invalid: 500,
  merchant_already_exists: 409,
  api_key_not_found: 404,
  api_key_limit: 400,
  // issue 12 input hardening (transport-level answers)
  request_timeout: 408,
  headers_too_large: 431,
  // attribution
  zero_from_address: 400,
  no_payment_to_accept: 409,
  payment_not_final: 409,
  // DELEGATE mode
  callback_not_registered: 400,
  delegate_not_enabled: 400,
  adapter_no_code: 400,
  adapter_domain_missing: 400,
  adapter_domain_mismatch: 400,
  invalid_calldata_signature: 400,
  calldata_signature_expired: 400,
  calldata_signature_exists: 409,
  invalid_authorization: 400,
  order_not_refundable: 409,
  authorization_used: 409,
  order_not_payable: 409,
  product_not_found: 404,
  link_not_found: 404,
  link_inactive: 410,
  link_expired: 410,
  link_sold_out: 410,
  amount_out_of_range: 400,
  idempotency_key_conflict: 409,
  quickpay_session_not_found: 404,
  login_failed: 401,
  portal_session_required: 401,
  csrf_token_invalid: 403,
  invitation_not_usable: 410,
  portal_user_exists: 409,
  // portal account security (docs/portal.md)
  auth_busy: 429,
  password_incorrect: 403,
  // card rail
  card_processor_unavailable: 503,
  card_payment_active: 409,
  card_order_not_refundable: 400,
  refund_exceeds_payment: 400,
  card_hold_not_found: 409,
  invalid_processor_signature: 400,
  // machine payments: payer proof on open challenges (docs/machine-payments.md)
  payer_proof_required: 401,
  payer_proof_invalid: 401,
  // GOAT Network's SDK: DELEGATE checkout sessions refused (docs/migrating.md)
  delegate_checkout_unsupported: 400,
};

test('every code of the compatible wire is in the catalog with its status', () => {
  for (const [code, status] of Object.entries(FROM_WIRE)) {
    assert.ok(isErrorCode(code), code);
    assert.equal(ERROR_CODES[code as ErrorCode], status, code);
  }
});

test('the codes added for the server are in the catalog with their chosen status', () => {
  for (const [code, status] of Object.entries(ADDED)) {
    assert.ok(isErrorCode(code), code);
    assert.equal(errorStatus(code as ErrorCode), status, code);
  }
});

test('the catalog is closed: exactly the listed codes, no stray additions without a test', () => {
  assert.deepEqual(Object.keys(ERROR_CATALOG).sort(), Object.keys({ ...FROM_WIRE, ...ADDED }).sort());
});

test('ERROR_CODES is derived from the catalog and frozen', () => {
  assert.deepEqual(Object.keys(ERROR_CODES), Object.keys(ERROR_CATALOG));
  for (const code of Object.keys(ERROR_CATALOG) as ErrorCode[]) assert.equal(ERROR_CODES[code], ERROR_CATALOG[code].status);
  assert.equal(Object.isFrozen(ERROR_CODES), true);
});

test('every entry: snake_case code, an error status, a one-line description', () => {
  for (const [code, entry] of Object.entries(ERROR_CATALOG)) {
    assert.match(code, /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/, code);
    assert.ok(entry.status >= 400 && entry.status <= 599, code);
    assert.notEqual(entry.status, 402, '402 is a success of this interface, never an error');
    assert.ok(entry.description.length >= 10 && entry.description.length <= 120, `${code}: ${entry.description.length} chars`);
    assert.doesNotMatch(entry.description, /\n/);
    assert.match(entry.description, /\.$/, `${code} description ends with a period`);
  }
});

test('a nonce replay is 401, not 409, with the exact message the interface fixes', () => {
  assert.equal(ERROR_CODES.replay_detected, 401);
  const env = errorEnvelope({ code: 'replay_detected', message: 'something else', requestId: 'req_1' });
  assert.equal(env.error, 'Replay request detected');
});

test('errorEnvelope: message, default message, param only when given', () => {
  assert.deepEqual(errorEnvelope({ code: 'invalid_request', message: 'amount_wei must be an integer string', param: 'amount_wei', requestId: 'req_9x' }), {
    error: 'amount_wei must be an integer string',
    code: 'invalid_request',
    param: 'amount_wei',
    request_id: 'req_9x',
  });
  const env = errorEnvelope({ code: 'order_not_found', requestId: 'req_2' });
  assert.deepEqual(env, { error: ERROR_CATALOG.order_not_found.description, code: 'order_not_found', request_id: 'req_2' });
  assert.equal('param' in env, false);
});

test('isErrorCode rejects prototype names and near misses', () => {
  for (const s of ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'NOT_FOUND', 'not-found', '', undefined, 404]) {
    assert.equal(isErrorCode(s), false, String(s));
  }
});

test('isErrorEnvelope', () => {
  assert.equal(isErrorEnvelope({ error: 'x', code: 'not_found', request_id: 'req_1' }), true);
  assert.equal(isErrorEnvelope({ error: 'x', code: 'not_found', request_id: 'req_1', param: 'p' }), true);
  for (const v of [null, 'x', {}, { error: 'x', code: 'brand_new_code', request_id: 'req_1' }, { error: 1, code: 'not_found', request_id: 'req_1' }, { error: 'x', code: 'not_found' }, { error: 'x', code: 'not_found', request_id: 'req_1', param: 3 }]) {
    assert.equal(isErrorEnvelope(v), false, JSON.stringify(v));
  }
});
