// The SDK's one door to @tollgate/protocol (signing, webhook signatures, the error catalog).
//
// Why a relative path and not the package name: @tollgate/protocol is a private workspace package
// whose `exports` point at TypeScript sources. A bare `import '@tollgate/protocol'` would survive
// compilation unchanged and a plain-JavaScript consumer of dist/ would then load `.ts` files, which
// Node 20 cannot run. Importing the sources relatively makes `tsc -p tsconfig.build.json` compile
// them into dist/protocol/ next to the SDK (rewriting `.ts` specifiers to `.js`), so the published
// package is self-contained and has zero runtime dependencies, while the server and the SDK still
// share one implementation. If protocol is ever published on its own, this line becomes
// `from '@tollgate/protocol'` plus a dependency, and nothing else changes.
export {
  ERROR_CATALOG,
  isTerminalOrderStatus,
  ORDER_STATUSES,
  TERMINAL_ORDER_STATUSES,
  formatUnits,
  MoneyError,
  parseDecimal,
  isErrorCode,
  signedHeaders,
  verifyStandardWebhook,
  verifyWebhookSignature,
  WEBHOOK_EVENTS,
  WebhookVerificationError,
  HEADER_WEBHOOK_SIGNATURE,
  type ErrorCode,
  type OrderStatus,
  type QuickPayStatus,
  type TerminalOrderStatus,
  type HeaderSource,
  type SignedHeaders,
  type WebhookEventName,
} from '../../protocol/src/index.ts';
