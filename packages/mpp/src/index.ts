// @tollgate/mpp: protect a resource server's routes with Tollgate machine payments (the IETF
// `Payment` HTTP authentication scheme). See docs/machine-payments.md, "Middleware".
export { createMppGuard, memoryClaims, type TollgateMppOptions, type IncomingRequest, type MppDecision, type MppGuard, type VerifiedReceipt, type MiddlewareErrorCode } from './core.ts';
export { tollgateMpp, tollgateMppFastify, tollgateMppHono, mppReceipt } from './adapters.ts';
export { JwksCache } from './jwks.ts';
