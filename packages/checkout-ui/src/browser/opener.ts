// The channel GOAT's browser checkout SDK opens to this page (docs/hosted-checkout.md, "GOAT's
// browser checkout SDK"): the SDK opens `/checkout?cs=<id>&o=<its origin>&n=<nonce>` in a popup or
// tab (the server redirects it to `/checkout/pay?o=…&n=…#<id>`) and waits for `goat:ready`, then
// one of `goat:success`, `goat:cancel`, `goat:error`, each carrying its nonce `n`. The page talks
// only to its opener, and only when `o` is one of the session's return origins (the origins of its
// success_url and cancel_url, which the merchant's allowlist admitted at creation): postMessage's
// target origin is that origin, never '*', so another site that opens the checkout learns nothing,
// not even that the page loaded. Nothing sent here is a proof of payment: the merchant confirms
// with Tollgate server-side. Kept small: the page has a 20 KB gzip budget.
import type { PublicSession } from '../lib/types.ts';

const q = new URLSearchParams(location.search);
let send: ((type: string, fields?: object) => void) | undefined;

// The session's return URLs were checked by the server (absolute http(s) URLs), so they parse.
const originOf = (u: string | undefined) => u && new URL(u).origin;

/** Opens the channel when the opener's origin is one of the session's return origins. */
export function connectOpener(s: PublicSession) {
  const o = q.get('o');
  const n = q.get('n');
  const to = opener as Window | null;
  // `o` must equal one of those origins exactly (so it is a bare origin); the nonce is echoed as is.
  const ok = to && o && n && [originOf(s.success_url), originOf(s.cancel_url)].includes(o);
  if (!ok) return;
  // `o` is a parsed origin: postMessage cannot refuse it; a closed opener drops the message.
  send = (type, fields) => to.postMessage({ type, n, ...fields }, o);
  send('goat:ready');
}

/**
 * The page's one terminal event, from the final screen it shows (page.ts `finish`): completed is
 * goat:success (with `fields`), cancelled goat:cancel, any other goat:error naming the screen.
 */
export function openerEnd(screen: string | undefined, fields?: object) {
  // Absent values go as undefined/null: the SDK keeps a field only when it is a string.
  if (screen === 'completed') send?.('goat:success', { status: 'PAYMENT_CONFIRMED', client_reference_id: q.get('client_reference_id'), ...fields });
  else send?.(screen === 'cancelled' ? 'goat:cancel' : 'goat:error', { message: screen });
  send = undefined;
}
