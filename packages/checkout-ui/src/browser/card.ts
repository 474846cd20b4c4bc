// The card half of the hosted page: "Pay by card" starts the session's card order
// (POST …/card); the TEST processor's card form posts the card to Tollgate's own origin (the only
// place the page talks to; CSP connect-src 'self'); a processor with its own hosted page (Stripe
// Checkout) gets a redirect. The card amount and currency are the session's fiat terms, shown on
// their own: never a conversion of the crypto price. The checkout page loads this module as a
// chunk (card-method.ts); the quick-pay page imports it.
import type { ApiError } from '../lib/api.ts';
import type { CardStart, TestCardResult } from '../lib/types.ts';
import type { CardContext, PaidCard } from './card-method.ts';
import { h, replace, setText } from './dom.ts';
import { lineItems } from './items.ts';

const POLL_MS = 2000;
/** The card payment's order and the card this page paid with (TEST processor form), for the receipt. */
const paidWith: PaidCard = {};
// A chunk has its own copy of every class: the page's ApiError is recognised by its shape.
const apiError = (e: unknown): e is ApiError => typeof e === 'object' && e !== null && 'status' in e && 'code' in e;

/** The card total, and the items without their token prices (the card amount is not their sum). */
function cardTotal(c: CardContext, text: string) {
  const ui = c.summary();
  if (!ui) return;
  const s = c.session();
  replace(ui.items, lineItems({ ...s, line_items: s.line_items.map(({ name, quantity }) => ({ name, quantity })) }, ''));
  setText(ui.total, text);
}

let timer: ReturnType<typeof setTimeout> | undefined;
let busy = false;

/**
 * How the processor's page sent the payer back, if it did: the card rail asks it to return to this
 * page with `card_return=paid` after a payment and `card_return=cancelled` otherwise
 * (apps/server/src/rails/card/port.ts). Kept in the URL, so a reload still knows.
 */
function cardReturn(): 'paid' | 'cancelled' | undefined {
  const v = new URLSearchParams(location.search).get('card_return');
  return v === 'paid' || v === 'cancelled' ? v : undefined;
}

/**
 * Starts (or resumes) the card payment and shows what comes next. `resume`: the page was opened on
 * an attempt that already has a card payment (a reload, or the processor's page sending the payer
 * back): a processor page is then offered with a button, never re-entered by itself.
 */
export async function startCard(c: CardContext, opts: { resume?: boolean } = {}): Promise<void> {
  if (busy) return;
  busy = true;
  c.say('Preparing your card payment…');
  let st: CardStart;
  try {
    st = await c.api.card();
  } catch (e) {
    busy = false;
    if (apiError(e) && (e.status === 404 || e.status === 409 || e.status === 410)) return void c.refused(e);
    return c.say(apiError(e) ? e.message : 'Tollgate could not be reached. Check your connection and try again.');
  }
  busy = false;
  paidWith.orderId = st.order_id;
  c.say('');
  cardTotal(c, `Total ${st.amount} ${st.currency}`);
  if (st.payment_state === 'processing' || st.order_status !== 'CHECKOUT_VERIFIED') return waitFor(c, st.order_status === 'PAYMENT_CONFIRMED');
  if (st.next_action.type === 'redirect' && st.next_action.url) {
    const back = cardReturn();
    // Back from a payment on the processor's page: its notification may trail the payer by a
    // few seconds. Wait for it here rather than send the payer to pay again.
    if (back === 'paid' && st.payment_state === 'pending') return waitFor(c, false, true);
    if (opts.resume || back || st.payment_state === 'declined')
      return showContinue(c, st, back === 'cancelled' ? 'You left the card payment page without paying.' : st.payment_state === 'declined' ? 'The card payment was declined. Try again with another card.' : undefined);
    return goTo(c, st.next_action.url);
  }
  showForm(c, st);
}

function goTo(c: CardContext, url: string) {
  c.say('Taking you to the card payment page…');
  location.assign(url);
}

/** The processor's own page (Stripe Checkout) takes the card: a button to (go back to) it. */
function showContinue(c: CardContext, st: CardStart, note?: string) {
  const url = st.next_action.url!;
  c.setScreen(
    h(
      'section',
      { 'aria-labelledby': 'card-go-h', 'data-screen': 'card-redirect' },
      h('h2', { id: 'card-go-h', tabindex: -1 }, `Pay ${st.amount} ${st.currency} by card`),
      note ? h('p', { class: 'notice', role: 'status' }, note) : undefined,
      h('p', {}, 'You enter your card on the card processor’s secure page; it sends you back here when you are done.'),
      h('button', { type: 'button', class: 'primary', onclick: () => goTo(c, url) }, 'Continue to card payment'),
      c.back ? h('button', { type: 'button', class: 'link', onclick: c.back }, 'Pay with tokens instead') : undefined,
    ),
  );
}

function field(id: string, label: string, attrs: Record<string, string>) {
  const input = h('input', { id, name: id, type: 'text', inputmode: 'numeric', required: true, spellcheck: 'false', ...attrs });
  return { input, node: h('div', { class: 'field' }, h('label', { for: id }, label), input) };
}

function showForm(c: CardContext, st: CardStart, error?: string) {
  const num = field('cc-number', 'Card number', { autocomplete: 'cc-number', placeholder: '4242 4242 4242 4242', maxlength: '23' });
  const exp = field('cc-exp', 'Expiry (MM/YY)', { autocomplete: 'cc-exp', placeholder: 'MM/YY', maxlength: '7' });
  const cvc = field('cc-csc', 'CVC', { autocomplete: 'cc-csc', placeholder: '123', maxlength: '4' });
  const err = h('p', { id: 'card-err', class: 'error', role: 'alert', hidden: !error }, error ?? '');
  const pay = h('button', { type: 'submit', class: 'primary' }, `Pay ${st.amount} ${st.currency}`);
  const form = h('form', { class: 'card-form', novalidate: true, 'aria-describedby': 'card-test-note' }, num.node, h('div', { class: 'field-row' }, exp.node, cvc.node), err, pay);
  const fail = (text: string, focus: HTMLInputElement) => {
    err.hidden = false;
    setText(err, text);
    focus.setAttribute('aria-invalid', 'true');
    focus.focus();
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const digits = num.input.value.replace(/[\s-]/g, '');
    const m = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(exp.input.value.trim());
    if (!/^\d{12,19}$/.test(digits)) return fail('Enter the card number (12 to 19 digits).', num.input);
    if (!m || Number(m[1]) < 1 || Number(m[1]) > 12) return fail('Enter the expiry as MM/YY.', exp.input);
    if (!/^\d{3,4}$/.test(cvc.input.value.trim())) return fail('Enter the 3- or 4-digit security code.', cvc.input);
    const year = m[2]!.length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
    pay.disabled = true;
    c.say('Paying…');
    void c.api.testCard({ number: digits, exp_month: Number(m[1]), exp_year: year, cvc: cvc.input.value.trim() }).then(
      (r) => {
        // The number leaves the form once it was sent: nothing keeps it in the page.
        num.input.value = '';
        cvc.input.value = '';
        onResult(c, st, r);
      },
      (e2: unknown) => {
        pay.disabled = false;
        c.say('');
        if (apiError(e2) && e2.status === 400) return fail(e2.param === 'number' ? 'This card number is not valid.' : e2.message, e2.param === 'number' ? num.input : exp.input);
        if (apiError(e2) && (e2.status === 404 || e2.status === 409 || e2.status === 410)) return void c.refused(e2);
        fail(apiError(e2) ? e2.message : 'Tollgate could not be reached. Try again.', num.input);
      },
    );
  });
  c.setScreen(
    h(
      'section',
      { 'aria-labelledby': 'card-h', 'data-screen': 'card' },
      h('h2', { id: 'card-h', tabindex: -1 }, `Pay ${st.amount} ${st.currency} by card`),
      h('p', { id: 'card-test-note', class: 'notice' }, `Test mode (${st.processor} processor): no real card is charged. Use 4242 4242 4242 4242 with any future expiry and any CVC.`),
      form,
      c.back ? h('button', { type: 'button', class: 'link', onclick: c.back }, 'Pay with tokens instead') : undefined,
    ),
  );
}

function onResult(c: CardContext, st: CardStart, r: TestCardResult) {
  if (r.outcome === 'declined') {
    c.say(''); // the form's alert says it, once
    return showForm(c, st, `Card ending ${r.card_last4} was declined${r.decline_code === 'insufficient_funds' ? ' (insufficient funds)' : ''}. Try another card.`);
  }
  paidWith.last4 = r.card_last4; // the receipt's "Card ending …" (the number itself is gone)
  if (r.order_status === 'INVOICED') return c.completed(paidWith);
  waitFor(c, r.order_status === 'PAYMENT_CONFIRMED');
}

/**
 * Paid but held, still processing, or back from the processor's page: wait for the session to
 * complete (or fail). A processing payment is waited for even past the payment window: the
 * session stays open until the processor answers (it is never shown as expired under the payer).
 */
function waitFor(c: CardContext, held: boolean, returned = false) {
  c.paid();
  const [screen, title, text, live] = held
    ? [
        'card-held',
        'Payment received, under review',
        `${c.session().merchant.name} has your payment but must review it before your order completes. You do not need to pay again; keep this page open or come back later.`,
        'Payment received. It is being reviewed.',
      ]
    : returned
      ? ['card-confirming', 'Confirming your card payment', 'The card processor sent you back. Tollgate is waiting for its confirmation; this page updates by itself. Do not pay again.', 'Confirming your card payment.']
      : ['card-processing', 'Your card payment is processing', 'This can take a little while, even past the time limit: the payment stays open until the card processor answers. Do not pay again; this page updates by itself.', 'Payment processing.'];
  c.setScreen(h('section', { 'aria-labelledby': 'card-wait-h', class: 'result tone-warn', 'data-screen': screen }, h('h2', { id: 'card-wait-h', tabindex: -1 }, title), h('p', {}, text)));
  c.say(live);
  poll(c);
}

function poll(c: CardContext) {
  if (timer) clearTimeout(timer);
  timer = setTimeout(async () => {
    timer = undefined;
    try {
      const st = await c.api.status();
      if (st.status === 'COMPLETED') return c.completed(paidWith);
      if (st.status === 'FAILED') return c.failed();
      if (st.status === 'EXPIRED') return c.expired();
      if (st.order_status === 'CHECKOUT_VERIFIED') {
        // Processing ended in a decline: back to the form.
        const s = await c.api.card();
        if (s.payment_state === 'declined') {
          return s.next_action.type === 'redirect' ? showContinue(c, s, 'The card payment was declined. Try again with another card.') : showForm(c, s, 'The card payment was declined. Try another card.');
        }
      }
    } catch {
      /* keep polling */
    }
    poll(c);
  }, POLL_MS);
}

(window as unknown as Record<string, unknown>).tollgate_card = { startCard };
