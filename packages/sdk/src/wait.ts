// Polling an order until it settles (docs/orders.md "Lifecycle").
//
// The poller never assumes it sees every state: an order may go CHECKOUT_VERIFIED → INVOICED in one
// step (confirmation and finality reached between two polls), or back from PAYMENT_CONFIRMED to
// CHECKOUT_VERIFIED after a deep reorg. It reports whatever change it observes and stops at the
// first terminal status. It resolves with the final record for every terminal status (EXPIRED,
// CANCELLED and FAILED are outcomes, not exceptions: STYLE 5); only INVOICED permits fulfilment.
import { TollgateApiError, TollgateNetworkError, TollgateTimeoutError } from './errors.ts';
import { sleep } from './transport.ts';
import { isTerminalOrderStatus, type CallOptions, type OrderStatusRecord } from './types.ts';

export interface WaitForOrderOptions {
  /** Pause between two polls, in ms. Default 2000. */
  intervalMs?: number | undefined;
  /** Overall deadline in ms; then the promise rejects with TollgateTimeoutError (`lastOrder` set). Default: none. */
  timeoutMs?: number | undefined;
  /** Stops waiting; the promise rejects with `signal.reason`. */
  signal?: AbortSignal | undefined;
  /**
   * Called with each observed status change, including the first observation (`previousStatus`
   * undefined). Awaited before the next poll; a throw rejects the wait.
   */
  onStatusChange?: ((order: OrderStatusRecord, previousStatus: string | undefined) => void | Promise<void>) | undefined;
}

/** Failures worth another poll: the status read itself already retried them and still failed. */
function isTransient(err: unknown): boolean {
  if (err instanceof TollgateNetworkError || err instanceof TollgateTimeoutError) return true;
  return err instanceof TollgateApiError && (err.status === 408 || err.status === 429 || err.status >= 500);
}

/**
 * Polls `readStatus` until the order reaches a terminal status and resolves with that record.
 * Non-transient errors (401, 404, an unreadable body) reject at once; transient ones (network,
 * 429, 5xx) are ridden out until the next poll or the deadline.
 *
 * @example
 * const final = await pollOrderUntilTerminal((o) => client.getOrderStatus(id, o), id, { intervalMs: 1000 });
 */
export async function pollOrderUntilTerminal(readStatus: (opts: CallOptions) => Promise<OrderStatusRecord>, orderId: string, opts: WaitForOrderOptions = {}): Promise<OrderStatusRecord> {
  const intervalMs = opts.intervalMs ?? 2000;
  if (!Number.isFinite(intervalMs) || intervalMs < 0) throw new TypeError('Tollgate: waitForOrder intervalMs must be a non-negative number');
  if (opts.timeoutMs !== undefined && !(opts.timeoutMs > 0)) throw new TypeError('Tollgate: waitForOrder timeoutMs must be a positive number');
  opts.signal?.throwIfAborted();

  const deadline = new Error('waitForOrder deadline');
  const controller = new AbortController();
  const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => controller.abort(deadline), opts.timeoutMs);
  const onAbort = () => controller.abort(opts.signal!.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  let last: OrderStatusRecord | undefined;
  let lastError: unknown;
  const stopped = (): unknown =>
    controller.signal.reason === deadline
      ? new TollgateTimeoutError(`order ${orderId} did not reach a terminal status within ${opts.timeoutMs} ms (last status: ${last?.status ?? 'none seen'})`, {
          timeoutMs: opts.timeoutMs!,
          lastOrder: last,
          cause: lastError,
        })
      : controller.signal.reason;

  try {
    for (;;) {
      let record: OrderStatusRecord | undefined;
      try {
        record = await readStatus({ signal: controller.signal });
        lastError = undefined;
      } catch (err) {
        if (controller.signal.aborted) throw stopped();
        if (!isTransient(err)) throw err;
        lastError = err;
      }
      if (record) {
        const previous = last?.status;
        last = record;
        if (record.status !== previous) await opts.onStatusChange?.(record, previous);
        if (isTerminalOrderStatus(record.status)) return record;
      }
      if (controller.signal.aborted) throw stopped();
      try {
        await sleep(intervalMs, controller.signal);
      } catch {
        throw stopped();
      }
    }
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}
