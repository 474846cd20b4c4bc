/**
 * Wall clock in milliseconds; tests replace it to move time without sleeping.
 * Its own module (not deps.ts) so services can take a Clock without importing the composition
 * types that import those services.
 */
export interface Clock {
  now(): number;
}
export const systemClock: Clock = { now: () => Date.now() };
