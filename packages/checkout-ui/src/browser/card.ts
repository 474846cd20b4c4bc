// The card half of the hosted page: "Pay by card" starts the session's card order
// (POST …/card); the TEST processor's card form posts the card to Tollgate's own origin (the only
// place the page talks to; CSP connect-src 'self'); a processor with its own hosted page (Stripe
// Checkout) gets a redirect. The card amount and currency are the session's fiat terms, shown on
// their own: never a conversion of the crypto price.
import { ApiError, type CheckoutApi } from '../lib/api.ts';
import type { CardStart, PublicSession, TestCardResult } from '../lib/types.ts';
import { h, replace, setText } from './dom.ts';
import { lineItems } from './views.ts';

const POLL_MS = 2000;

export interface CardContext {
  api: CheckoutApi;
  session: () => PublicSession;
  setScreen(node: HTMLElement): void;
  say(text: string): void;
  /** the page's summary (items and total), to show the card total */
  summary(): { items: HTMLElement; total: HTMLElement } | undefined;
  /** session COMPLETED / FAILED / EXPIRED: the page's final screens */
  completed(): void;
  failed(): void;
  expired(): void;
  /** a 409/410/404 while starting: let the page re-read the session and route again */
  refused(e: ApiError): unknown;
  /** the processor has the payment (processing or held): stop the countdown, drop "cancel" */
  paid(): void;
  /** back to the choice of payment method (shown only when crypto is offered too) */
  back: (() => void) | undefined;
}

export const cardLine = (s: PublicSession) => `${s.fiat_amount ?? ''} ${s.fiat_currency ?? ''}`.trim();

/** The "Pay by card" block of the choose screen. */
export function cardMethod(s: PublicSession, onCard: () => void) {
  return h(
    'div',
    { class: 'method', 'data-method': 'card' },
    h('h3', {}, 'Pay by card'),
    h('p', { class: 'muted small' }, `Card payments are charged ${cardLine(s)}, set by the merchant (not converted from the token price).`),
    h('button', { type: 'button', class: 'secondary', onclick: onCard }, `Pay ${cardLine(s)} by card`),
  );
}

/** A card-only session: the card amount and the one way to pay. */
export function cardOnlyScreen(s: PublicSession, onCard: () => void) {
  return h('section', { 'aria-labelledby': 'card-only-h', 'data-screen': 'choose' }, h('h2', { id: 'card-only-h', tabindex: -1 }, `Pay ${cardLine(s)}`), cardMethod(s, onCard));
}

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

/** Starts (or resumes) the card payment and shows what comes next. */
export async function startCard(c: CardContext): Promise<void> {
  if (busy) return;
  busy = true;
  c.say('Preparing your card payment…');
  let st: CardStart;
  try {
    st = await c.api.card();
  } catch (e) {
    busy = false;
    if (e instanceof ApiError && (e.status === 404 || e.status === 409 || e.status === 410)) return void c.refused(e);
    return c.say(e instanceof ApiError ? e.message : 'Tollgate could not be reached. Check your connection and try again.');
  }
  busy = false;
  c.say('');
  cardTotal(c, `Total ${st.amount} ${st.currency}`);
  if (st.next_action.type === 'redirect' && st.next_action.url) {
    c.say('Taking you to the card payment page…');
    location.assign(st.next_action.url);
    return;
  }
  if (st.payment_state === 'processing' || st.order_status !== 'CHECKOUT_VERIFIED') return waitFor(c, st.order_status === 'PAYMENT_CONFIRMED');
  showForm(c, st);
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
        if (e2 instanceof ApiError && e2.status === 400) return fail(e2.param === 'number' ? 'This card number is not valid.' : e2.message, e2.param === 'number' ? num.input : exp.input);
        if (e2 instanceof ApiError && (e2.status === 404 || e2.status === 409 || e2.status === 410)) return void c.refused(e2);
        fail(e2 instanceof ApiError ? e2.message : 'Tollgate could not be reached. Try again.', num.input);
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
    c.say('Your card was declined.');
    return showForm(c, st, `Card ending ${r.card_last4} was declined${r.decline_code === 'insufficient_funds' ? ' (insufficient funds)' : ''}. Try another card.`);
  }
  if (r.order_status === 'INVOICED') return c.completed();
  waitFor(c, r.order_status === 'PAYMENT_CONFIRMED');
}

/** Paid but held, or still processing: wait for the session to complete (or fail). */
function waitFor(c: CardContext, held: boolean) {
  c.paid();
  c.setScreen(
    h(
      'section',
      { 'aria-labelledby': 'card-wait-h', class: 'result tone-warn', 'data-screen': held ? 'card-held' : 'card-processing' },
      h('h2', { id: 'card-wait-h', tabindex: -1 }, held ? 'Payment received, under review' : 'Your card payment is processing'),
      h('p', {}, held
        ? `${c.session().merchant.name} has your payment but must review it before your order completes. You do not need to pay again; keep this page open or come back later.`
        : 'This can take a little while. Do not pay again; this page updates by itself.'),
    ),
  );
  c.say(held ? 'Payment received. It is being reviewed.' : 'Payment processing.');
  poll(c);
}

function poll(c: CardContext) {
  if (timer) clearTimeout(timer);
  timer = setTimeout(async () => {
    timer = undefined;
    try {
      const st = await c.api.status();
      if (st.status === 'COMPLETED') return c.completed();
      if (st.status === 'FAILED') return c.failed();
      if (st.status === 'EXPIRED') return c.expired();
      if (st.order_status === 'CHECKOUT_VERIFIED') {
        // Processing ended in a decline: back to the form.
        const s = await c.api.card();
        if (s.payment_state === 'declined') return showForm(c, s, 'The card payment was declined. Try another card.');
      }
    } catch {
      /* keep polling */
    }
    poll(c);
  }, POLL_MS);
}
