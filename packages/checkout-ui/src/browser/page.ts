// The hosted checkout page's shared state and its screen slot. This module owns every piece of
// state more than one part of the page reads (the session, the payment attempt, the choice, `busy`,
// `finished`): the other modules read them through ES live bindings, which are read-only outside
// this file (the compiler refuses an assignment), and change them only through the functions
// below. Plain `let`s rather than an object: esbuild shortens their names, which keeps the bundle
// inside its 20 KB gzip budget (test/unit/bundle.test.ts). Nothing here imports another module of
// the page's flow, so any of them can import this one without a cycle.
import type { CheckoutApi } from '../lib/api.ts';
import { formatUnits } from '../lib/money.ts';
import { termsFor, type PreparedWallet, type Terms } from '../lib/terms.ts';
import type { PaymentOption, PublicSession } from '../lib/types.ts';
import { replace, setText } from './dom.ts';
import { lineItems } from './items.ts';
import { optionAmount, shell } from './views.ts';
import { openerEnd } from './opener.ts';

/** One attempt to pay by token: the bound order's terms and how far the payer got. */
export interface Payment {
  terms: Terms;
  from?: string;
  sender?: { name: string; send: PreparedWallet['send'] }; // the wallet paying (EIP-1193 or Wallet Standard), for "send again"
  txHash?: string;
  /** the status projection reported the transfer (it is in a block) */
  seen?: boolean;
  showQr: boolean;
}

/** the page's root element (index.html's `#app`) */
export const mount = document.getElementById('app')!;
export let api: CheckoutApi;
export let session: PublicSession;
export let ui: ReturnType<typeof shell> | undefined;
export let selected: PaymentOption | undefined;
/** a wallet or QR payment is being prepared or sent: its buttons are disabled, no "too late" screen */
export let busy = false;
export let payment: Payment | undefined;
/** a final screen is showing: no more polling, countdown or screens of the payment flow */
export let finished = false;
/** the `data-screen` of the screen showing ('' before the first) */
export let screenId = '';

export const select = (o: PaymentOption) => void (selected = o);
export const setBusy = (b: boolean) => void (busy = b);
export const setPayment = (p: Payment | undefined) => void (payment = p);

export const say = (text: string) => ui && setText(ui.live, text);
export const termsOf = (t: Parameters<typeof termsFor>[1]) => termsFor(session.payment_options, t);

/** Puts `node` in the screen slot; moves focus to its heading when the screen kind changes. */
export function setScreen(node: HTMLElement) {
  if (!ui) return;
  const id = node.getAttribute('data-screen') ?? '';
  const hadFocus = ui.screen.contains(document.activeElement);
  const first = screenId === '';
  replace(ui.screen, node);
  if ((!first && id !== screenId) || hadFocus) node.querySelector<HTMLElement>('h2')?.focus();
  screenId = id;
}

/** A page without a session (bad link, not found, unreachable): a bare shell and a message. */
export function bare(node: HTMLElement) {
  ui = shell(undefined, location.origin);
  replace(mount, ui.root);
  setScreen(node);
}

/** The page of a loaded session: header, summary and the (still empty) screen slot. */
export function open(a: CheckoutApi, s: PublicSession) {
  api = a;
  session = s;
  document.title = `Pay ${s.merchant.name}`;
  ui = shell(s, location.origin);
  // The payer gives up: GOAT's SDK opener (if any) hears goat:cancel before the page leaves.
  ui.cancel?.addEventListener('click', () => openerEnd('cancelled'));
  replace(mount, ui.root);
  setTotal();
}

// The status poll (polling.ts) and the countdown (countdown.ts) add their stop here: both end in
// final screens themselves, so this module cannot import them.
const stops: (() => void)[] = [];
export const onFinish = (stop: () => void) => void stops.push(stop);

/** A final screen: no more polling or countdown; "cancel" makes no sense any more (screens offer "return"). */
export function finish(node: HTMLElement) {
  finished = true;
  openerEnd(node.dataset.screen);
  for (const stop of stops) stop();
  if (ui) {
    ui.timer.hidden = true;
    ui.cancel?.remove();
    setText(ui.live, '');
  }
  setScreen(node);
}

// main.ts's router, set once at start. The payment flow must route again when the session changed
// under it (a refusal, an expired attempt), but main.ts imports that flow: it cannot import main.ts.
let router: () => void;
export const setRouter = (r: () => void) => void (router = r);
/** Takes the session as just read and shows the screen it calls for. */
export function reroute(s: PublicSession) {
  session = s;
  router();
}
/** Re-reads the session and routes again, then says `msg` unless a final screen shows; says `msg` also when the read fails. */
export const refresh = (msg: string) =>
  api.session().then(
    (s) => (reroute(s), !finished && say(msg)),
    () => say(msg),
  );

/** The summary: line items in the currency being paid, and the total of the attempt or of the choice. */
export function setTotal() {
  if (!ui) return;
  const t = payment?.terms;
  const currency = t?.tokenSymbol ?? selected?.token_symbol ?? session.payment_options[0]?.token_symbol ?? '';
  if (ui.items.isConnected) replace(ui.items, lineItems(session, currency));
  setText(ui.total, t ? `Total ${formatUnits(t.amountWei, t.decimals)} ${t.tokenSymbol}` : selected ? `Total ${optionAmount(selected)}` : session.price ? `Total ${session.price}` : '');
}
