import { Type, type Static } from '@sinclair/typebox';

/**
 * Bodies of the x402 v2 facilitator API, as the reference HTTP facilitator client
 * (@x402/core HTTPFacilitatorClient) sends and parses them: POST {url}/verify and {url}/settle
 * with `{ x402Version, paymentPayload, paymentRequirements }`, GET {url}/supported.
 *
 * Request schemas check the structure only (objects, strings where the protocol has strings) and
 * allow unknown members (the protocol adds `extensions`, `resource`, …): a payload that is
 * well-formed JSON but wrong for the scheme is answered `isValid: false` with an x402 reason code,
 * which the resource server understands, not with a gateway error envelope.
 */
const Str = (max = 256) => Type.String({ maxLength: max });
const Loose = { additionalProperties: true } as const;

const PaymentRequirementsSchema = Type.Object(
  {
    scheme: Str(64),
    network: Str(64),
    amount: Str(80),
    asset: Str(128),
    payTo: Str(128),
    maxTimeoutSeconds: Type.Number(),
    extra: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  },
  Loose,
);

const PaymentPayloadSchema = Type.Object(
  {
    x402Version: Type.Integer(),
    accepted: PaymentRequirementsSchema,
    payload: Type.Record(Type.String(), Type.Unknown()),
  },
  Loose,
);

export const FacilitatorRequestSchema = Type.Object(
  {
    x402Version: Type.Integer(),
    paymentPayload: PaymentPayloadSchema,
    paymentRequirements: PaymentRequirementsSchema,
  },
  Loose,
);
export type FacilitatorRequest = Static<typeof FacilitatorRequestSchema>;
export type PaymentRequirements = Static<typeof PaymentRequirementsSchema>;
export type PaymentPayload = Static<typeof PaymentPayloadSchema>;

export const VerifyResponseSchema = Type.Object({
  isValid: Type.Boolean(),
  invalidReason: Type.Optional(Type.String()),
  invalidMessage: Type.Optional(Type.String()),
  payer: Type.Optional(Type.String()),
});
export type VerifyResponse = Static<typeof VerifyResponseSchema>;

export const SettleResponseSchema = Type.Object({
  success: Type.Boolean(),
  errorReason: Type.Optional(Type.String()),
  errorMessage: Type.Optional(Type.String()),
  payer: Type.Optional(Type.String()),
  /** The transaction hash; empty when nothing was sent. */
  transaction: Type.String(),
  network: Type.String(),
  amount: Type.Optional(Type.String()),
});
export type SettleResponse = Static<typeof SettleResponseSchema>;

export const SupportedResponseSchema = Type.Object({
  kinds: Type.Array(
    Type.Object({
      x402Version: Type.Integer(),
      scheme: Type.String(),
      network: Type.String(),
      extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  ),
  extensions: Type.Array(Type.String()),
  /** Addresses that submit settlements, by CAIP family (`eip155:*`). */
  signers: Type.Record(Type.String(), Type.Array(Type.String())),
});
export type SupportedResponse = Static<typeof SupportedResponseSchema>;

/**
 * Reason codes, spelled as the reference implementation (@x402/evm exact facilitator, x402 spec)
 * spells them so resource servers and clients can branch on them.
 */
export const Reason = {
  invalidVersion: 'invalid_x402_version',
  unsupportedScheme: 'unsupported_scheme',
  invalidNetwork: 'invalid_network',
  invalidPayload: 'invalid_payload',
  unsupportedPayloadType: 'unsupported_payload_type',
  unsupportedTransferMethod: 'unsupported_asset_transfer_method',
  schemeMismatch: 'invalid_exact_evm_scheme',
  networkMismatch: 'invalid_exact_evm_network_mismatch',
  recipientMismatch: 'invalid_exact_evm_recipient_mismatch',
  invalidSignature: 'invalid_exact_evm_signature',
  validBefore: 'invalid_exact_evm_payload_authorization_valid_before',
  validAfter: 'invalid_exact_evm_payload_authorization_valid_after',
  valueMismatch: 'invalid_exact_evm_payload_authorization_value_mismatch',
  eip3009NotSupported: 'invalid_exact_evm_eip3009_not_supported',
  nonceUsed: 'invalid_exact_evm_nonce_already_used',
  insufficientBalance: 'invalid_exact_evm_insufficient_balance',
  simulationFailed: 'invalid_exact_evm_transaction_simulation_failed',
  transactionFailed: 'invalid_exact_evm_transaction_failed',
  transferEventMismatch: 'invalid_exact_evm_transfer_event_mismatch',
  settlementPending: 'settlement_pending',
  /**
   * Tollgate's own (the reference facilitator has no such refusal): a 0-value authorization moves
   * nothing, and settling it would only spend the executor's gas.
   */
  zeroValue: 'invalid_exact_evm_zero_value',
  /**
   * Tollgate's own: `payTo` is not a receiving wallet of a merchant of this gateway, nor its
   * settlement contract, nor on the operator's allowlist (x402/scope.ts).
   */
  payToNotServed: 'pay_to_not_served',
  /** The gateway has no executor key (SETTLEMENT_KEY unset): it can verify, not settle. */
  settlementDisabled: 'settlement_not_enabled',
} as const;
export type ReasonCode = (typeof Reason)[keyof typeof Reason];
