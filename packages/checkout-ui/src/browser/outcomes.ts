// The page's final screens, one function each so that every part of the flow (router, payment,
// status poll, countdown, card) ends the page the same way: through page.ts's `finish`, which
// stops the poll and the countdown. Nothing on these screens is a proof of payment (docs/hosted-checkout.md): the merchant verifies with Tollgate server-side.
import { safeHttpUrl, successRedirect } from '../lib/api.ts';
import { formatUnits } from '../lib/money.ts';
import { sentTx } from '../lib/terms.ts';
import { loadChunk } from './chunk.ts';
import { h, sessionStore as storage } from './dom.ts';
import { openerEnd } from './opener.ts';
import { finish, payment, session, setScreen, termsOf } from './page.ts';
import type { PaidCard } from './card-method.ts';
import type * as Receipt from './receipt.ts';
import { messageScreen } from './views.ts';

const REDIRECT_MS = 2500;

const returnAction = () => {
  const u = safeHttpUrl(session?.cancel_url);
  return u ? { label: `Return to ${session.merchant.name}`, href: u.toString() } : undefined;
};
const merchant = () => session?.merchant.name ?? 'the merchant';

/**
 * `txHash`: from the status projection when the page learnt it there (paid by QR, or after a reload).
 * The final screen shows at once; its receipt (receipt.ts, a lazily loaded chunk) follows.
 */
export function completed(txHash?: string, card = !!session.order?.flow?.startsWith('FIAT_'), paid?: PaidCard) {
  const to = successRedirect(session.success_url, session.checkout_id);
  // The terms being paid, else the session's order (its explorer, token and amount).
  const o = session.order;
  const t = payment?.terms ?? (o ? termsOf(o) : undefined);
  const hash = payment?.txHash ?? txHash ?? (o ? sentTx.get(storage(), o.order_id) : undefined);
  const orderId = paid?.orderId ?? t?.orderId ?? o?.order_id;
  // GOAT's checkout SDK (opener.ts) hears the payment before finish() would report a bare completion.
  openerEnd('completed', { session_id: session.checkout_id, order_id: orderId, tx_hash: hash });
  finish(h('section', { 'aria-labelledby': 'done-h', class: 'result tone-ok', 'data-screen': 'completed' }, h('h2', { id: 'done-h', tabindex: -1 }, 'Payment complete')));
  void loadChunk<typeof Receipt>('receipt').then(
    (r) =>
      setScreen(
        r.doneScreen({
          merchant: merchant(),
          item: session.line_items.map((i) => (i.quantity > 1 ? `${i.quantity} × ${i.name}` : i.name)).join(', '),
          amount: card ? `${session.fiat_amount} ${session.fiat_currency}` : t && `${formatUnits(t.amountWei, t.decimals)} ${t.tokenSymbol}`,
          method: card ? (paid?.last4 ? `Card ending ${paid.last4}` : 'Card') : t && `${t.tokenSymbol} on ${t.chainName}`,
          reference: orderId,
          txHash: hash,
          explorerUrl: t?.explorerUrl,
          card,
          redirect: to,
          at: Date.now(),
        }),
      ),
    () => undefined, // the heading says it all; the receipt is a convenience
  );
  if (to) setTimeout(() => location.assign(to), REDIRECT_MS);
}
export const expired = () => finish(messageScreen('expired', 'warn', 'This checkout has expired', `Start no new payment on this page. If you already sent a payment, contact ${merchant()} with your transaction.`, returnAction()));
export const cancelled = () => finish(messageScreen('cancelled', 'warn', 'This checkout was cancelled', 'No payment can be made on this page.', returnAction()));
export const failed = () => finish(messageScreen('failed', 'error', 'The payment failed', `Do not send funds on this page. Contact ${merchant()} about your order.`, returnAction()));
export const tooLate = () => finish(messageScreen('too-late', 'warn', 'Too little time left to pay', `This checkout expires in less than a minute, too soon to pay safely. Ask ${merchant()} for a new checkout.`, returnAction()));
export const notFound = () => finish(messageScreen('not-found', 'error', 'Checkout not found', 'This payment link is wrong or no longer exists. Use the link the merchant gave you.'));
export const noOptions = () => finish(messageScreen('no-options', 'warn', 'Token payment unavailable', `This checkout offers no token payment. Contact ${merchant()} to pay another way.`, returnAction()));
