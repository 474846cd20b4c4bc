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
