export interface WaitOptions {
  /** Give up after this long (default 20 s: generous for a loaded two-core machine). */
  timeoutMs?: number;
  /** Read again after this long (default 50 ms). */
  everyMs?: number;
}

const isSomething = (v: unknown) => v !== undefined && v !== null && v !== false;

/** What is awaited, for the timeout's message (a function: read only then). */
type Label = string | (() => string | Promise<string>);

/**
 * The one way a test waits for something to happen: reads `read()` every `everyMs` until `ok` holds
 * for the value (by default: a value other than undefined, null or false) and returns it; after
 * `timeoutMs` it fails with `what` and the last value read. Wait on the state itself, or on a
 * counter that shows the work ran (a watcher's tick count, a worker's passes) when the point is
 * that nothing happened: never on a fixed sleep.
 *
 * @example
 * const order = await waitFor(`order ${id} PAID`, () => getOrder(id), (o) => o.status === 'PAID');
 */
export function waitFor<T>(what: Label, read: () => T | Promise<T>, ok?: undefined, opts?: WaitOptions): Promise<Exclude<T, undefined | null | false>>;
export function waitFor<T>(what: Label, read: () => T | Promise<T>, ok: (v: T) => boolean, opts?: WaitOptions): Promise<T>;
export async function waitFor<T>(what: Label, read: () => T | Promise<T>, ok: (v: T) => boolean = isSomething, opts: WaitOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const last = await read();
    if (ok(last)) return last;
    if (Date.now() >= deadline) {
      const label = typeof what === 'string' ? what : await what();
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${label}; last: ${show(last)}`);
    }
    await sleep(opts.everyMs ?? 50);
  }
}

function show(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)) ?? String(v);
  } catch {
    return String(v);
  }
}

/** A pause for pacing (a request rate, a stall, a clock tick): never a wait for an outcome. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
