// Public surface of @tollgate/sdk, the merchant server SDK of Tollgate.
export { TollgateClient, type TollgateClientOptions } from './client.ts';
export type { WaitForOrderOptions } from './wait.ts';
export {
  TollgateError,
  TollgateApiError,
  TollgateNetworkError,
  TollgateTimeoutError,
  TollgateUnknownOutcomeError,
  TollgateResponseError,
  TollgateWebhookError,
  type SdkErrorCode,
  type TollgateErrorCode,
  type UnknownOutcomeDetails,
} from './errors.ts';
export { verifyWebhook, type HeaderSource, type VerifyWebhookOptions, type WebhookRejection, type WebhookVerification } from './webhooks.ts';
export type {
  CardEventPayload,
  FiatDisputeUpdatedEvent,
  FiatPaymentRefundedEvent,
  FiatPaymentSucceededEvent,
  MppPayment,
  MppPaymentConfirmedEvent,
  OrderRefundedEvent,
  OrderWebhookEvent,
  QuickpayCheckoutCompletedEvent,
  RecordedPaymentEvent,
  WebhookEvent,
  WebhookEventOf,
  WebhookPayloads,
  X402Settlement,
  X402SettlementConfirmedEvent,
} from './webhook-events.ts';
export {
  ORDER_STATUSES,
  TERMINAL_ORDER_STATUSES,
  isTerminalOrderStatus,
  type AcceptPaymentParams,
  type Refund,
  type RefundParams,
  type AuthorizationResult,
  type CalldataSignatureResult,
  type Eip3009Authorization,
  type CalldataSignRequest,
  type CallOptions,
  type CheckoutSession,
  type CreateCheckoutSessionParams,
  type CreatedOrder,
  type CreateOrderParams,
  type LineItem,
  type MerchantConfig,
  type MerchantSelf,
  type MerchantWallet,
  type ObservedTransfer,
  type OrderFlow,
  type OrderStatus,
  type OrderStatusRecord,
  type PaymentProof,
  type PaymentRail,
  type PaymentRequiredBody,
  type RecordedPaymentPayload,
  type TerminalOrderStatus,
} from './types.ts';
export {
  QuickPayClient,
  paymentLinkBody,
  productBody,
  type CreatePaymentLinkParams,
  type CreateProductParams,
  type ListOptions,
  type PaymentLink,
  type PaymentLinkSession,
  type Product,
  type UpdatePaymentLinkParams,
  type UpdateProductParams,
} from './quickpay.ts';
export { SDK_VERSION } from './transport.ts';
export { signCalldataSignRequest, signEip3009Authorization, type AuthorizationTarget, type TypedDataSigner } from './delegate.ts';
export { verifyMppReceipt, type MppReceiptClaims, type MppReceiptJwk, type MppReceiptVerification } from './receipts.ts';
// Shared with the server: the error catalog, and exact decimal ⇄ smallest-unit conversion (bigint,
// never floats) for turning a price into `amountWei` and `amountWei` back into display text.
export { ERROR_CATALOG, isErrorCode, formatUnits, parseDecimal, MoneyError, type ErrorCode } from './protocol.ts';
// Every event name the server emits, for subscribing an endpoint or checking a name at runtime.
export { WEBHOOK_EVENTS, type WebhookEventName } from './protocol.ts';
