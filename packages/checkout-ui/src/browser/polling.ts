// The `/status` poll while a token payment is under way: one request at a time, every 2 s, slower
// when Tollgate rate-limits, and on through network errors. What a report means for the attempt is
// pay.ts's `onStatus`, passed in: pay.ts starts the poll, so this module cannot import it.
import { ApiError } from '../lib/api.ts';
import type { StatusProjection } from '../lib/types.ts';
import { notFound } from './outcomes.ts';
import { api, finished, onFinish, payment, say } from './page.ts';

const POLL_MS = 2000;

let pollTimer: ReturnType<typeof setTimeout> | undefined;
let onStatus: (st: StatusProjection) => void;

/** Stops the poll: on a final screen, or when the attempt it watched is over. */
export function stopPolling() {
  if (pollTimer) clearTimeout(pollTimer);
  pollTimer = undefined;
}
onFinish(stopPolling);

/** Polls until a final screen or until no attempt is left (a poll already scheduled is kept). */
export function startPolling(handler: (st: StatusProjection) => void) {
  onStatus = handler;
  if (!pollTimer && !finished) pollTimer = setTimeout(poll, POLL_MS);
}

async function poll() {
  let delay = POLL_MS;
  try {
    onStatus(await api.status());
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return notFound();
    if (e instanceof ApiError && e.status === 429) delay = (e.retryAfter ?? 5) * 1000;
    else say('Connection problem. Still checking for your payment…');
  }
  pollTimer = undefined;
  if (!finished && payment) pollTimer = setTimeout(poll, delay);
}
