// Public surface of @tollgate/protocol: pure wire-level code shared by the server and the SDK.
// Zero runtime dependencies beyond node:crypto, so the SDK can depend on it without weight.
export * from './signing.ts';
export * from './webhooks.ts';
export * from './errors.ts';
export * from './ids.ts';
export * from './money.ts';
export * from './states.ts';
