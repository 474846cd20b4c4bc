/**
 * A process-local signal: this process just wrote deliveries to the outbox (an event emitted, a
 * redelivery queued). The dispatchers of this process claim at once instead of at their next idle
 * poll, so an in-process write is delivered within milliseconds of its commit while an idle
 * dispatcher polls only a few times a second. Writes by another process (the `api` role next to a
 * `worker`) are found by that idle poll. The signal is a hint, never the source of truth: the
 * outbox rows are, and the poll finds whatever a missed signal left behind.
 */
type Listener = () => void;
const listeners = new Set<Listener>();

/** Calls `fn` after every outbox write of this process; returns the unsubscribe. */
export function onOutboxWrite(fn: Listener): () => void {
  listeners.add(fn);
  return () => void listeners.delete(fn);
}

/** Called by the outbox writers right after their statement (its transaction may still be open). */
export function outboxWritten(): void {
  for (const fn of listeners) fn();
}
