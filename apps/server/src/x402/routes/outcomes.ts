import { AppError } from '../../http/errors.ts';
import { ChainUnavailable } from '../scheme.ts';

/** Runs a facilitator call; an RPC fault becomes 503 service_unavailable (nothing was decided). */
export async function orUnavailable<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ChainUnavailable) throw new AppError('service_unavailable', err.message);
    throw err;
  }
}

/**
 * The payer a facilitator request names (`authorization.from`, lowercase): the key of the
 * per-payer rate limit. Not verified yet — a request naming someone else spends that payer's
 * budget, which the per-IP limit bounds per client.
 */
export function payerOf(body: { paymentPayload?: { payload?: Record<string, unknown> } }): string | undefined {
  const a = body.paymentPayload?.payload?.authorization;
  const from = typeof a === 'object' && a !== null ? (a as Record<string, unknown>).from : undefined;
  return typeof from === 'string' && /^0x[0-9a-fA-F]{40}$/.test(from) ? `payer:${from.toLowerCase()}` : undefined;
}
