// The hosted checkout page: reads the checkout id from the URL fragment, loads the public session
// view and walks the payer through OPEN → BOUND → COMPLETED. All state lives here; views.ts builds
// the DOM. Nothing on this page is a proof of payment (interface.md, Receiver rule 7): the merchant
// verifies with Tollgate server-side.
import { ApiError, checkoutApi, checkoutIdFromHash, safeHttpUrl, successRedirect, type CheckoutApi } from '../lib/api.ts';
import { isAddress, isSolanaAddress, isSolanaOption } from '../lib/address.ts';
import { formatCountdown, secondsLeft } from '../lib/countdown.ts';
import { buildEip681Transfer } from '../lib/eip681.ts';
import { formatUnits } from '../lib/money.ts';
import { LIVE_ORDER, MIN_PAYMENT_WINDOW_SECONDS, type BindTerms, type PaymentOption, type PublicSession, type StatusProjection } from '../lib/types.ts';
import { discoverWallets, walletErrorMessage, type Wallet } from '../lib/wallet.ts';
import { h, replace, sessionStore as storage, setText } from './dom.ts';
import { optionKey, sentTx, termsFor, type PreparedWallet, type Terms } from '../lib/terms.ts';
import { cardMethod, cardOnlyScreen, startCard, type CardContext } from './card.ts';
import { prepareEvmWallet } from './evm-pay.ts';
import { solanaWalletArea, watchSolanaWallets } from './solana-pay.ts';
import { chooseScreen, doneScreen, lineItems, loadErrorScreen, messageScreen, optionAmount, payLine, payScreen, shell, walletButtons } from './views.ts';

const POLL_MS = 2000;
const REDIRECT_MS = 2500;

interface Payment {
  terms: Terms;
  from?: string;
  sender?: { name: string; send: PreparedWallet['send'] }; // the wallet paying (EIP-1193 or Wallet Standard), for "send again"
  txHash?: string;
  /** the status projection reported the transfer (it is in a block) */
  seen?: boolean;
  showQr: boolean;
}

const mount = document.getElementById('app')!;
let api: CheckoutApi;
let session: PublicSession;
let ui: ReturnType<typeof shell> | undefined;
let selected: PaymentOption | undefined;
let wallets: Wallet[] = [];
let walletSlot: HTMLElement | undefined;
let busy = false;
let payment: Payment | undefined;
let finished = false;
let screenId = '';
let pollTimer: ReturnType<typeof setTimeout> | undefined;
let tickTimer: ReturnType<typeof setInterval> | undefined;
let warnedMinute = false;
/** a card payment is processing or held: no countdown, no "cancel" (the processor has the payment) */
let cardPaid = false;

const say = (text: string) => ui && setText(ui.live, text);

/** Puts `node` in the screen slot; moves focus to its heading when the screen kind changes. */
function setScreen(node: HTMLElement) {
  if (!ui) return;
  const id = node.getAttribute('data-screen') ?? '';
  const hadFocus = ui.screen.contains(document.activeElement);
  const first = screenId === '';
  replace(ui.screen, node);
  if ((!first && id !== screenId) || hadFocus) node.querySelector<HTMLElement>('h2')?.focus();
  screenId = id;
}

/** A page without a session (bad link, not found, unreachable): a bare shell and a message. */
function bare(node: HTMLElement) {
  ui = shell(undefined, location.origin);
  replace(mount, ui.root);
  setScreen(node);
}

/** A final screen: no more polling or countdown; "cancel" makes no sense any more (screens offer "return"). */
function finish(node: HTMLElement) {
  finished = true;
  if (pollTimer) clearTimeout(pollTimer);
  if (tickTimer) clearInterval(tickTimer);
  if (ui) {
    ui.timer.hidden = true;
    ui.cancel?.remove();
    setText(ui.live, '');
  }
  setScreen(node);
}

const returnAction = () => {
  const u = safeHttpUrl(session?.cancel_url);
  return u ? { label: `Return to ${session.merchant.name}`, href: u.toString() } : undefined;
};
const merchant = () => session?.merchant.name ?? 'the merchant';

/** `txHash`: from the status projection when the page learnt it there (paid by QR, or after a reload). */
function completed(txHash?: string, card = !!session.order?.flow?.startsWith('FIAT_')) {
  const to = successRedirect(session.success_url, session.checkout_id);
  // The explorer of the order's chain: from the terms being paid, else from the session's order.
  const o = session.order;
  const explorerUrl = payment?.terms.explorerUrl ?? (o ? termsOf(o)?.explorerUrl : undefined);
  finish(doneScreen(merchant(), to, { explorerUrl, hash: payment?.txHash ?? txHash ?? (o ? sentTx.get(storage(), o.order_id) : undefined) }, card));
  if (to) setTimeout(() => location.assign(to), REDIRECT_MS);
}
const expired = () =>
  finish(messageScreen('expired', 'warn', 'This checkout has expired', `Start no new payment on this page. If you already sent a payment, contact ${merchant()} with your transaction.`, returnAction()));
const cancelled = () => finish(messageScreen('cancelled', 'warn', 'This checkout was cancelled', 'No payment can be made on this page.', returnAction()));
const failed = () =>
  finish(messageScreen('failed', 'error', 'The payment failed', `Do not send funds on this page. Contact ${merchant()} about your order.`, returnAction()));
const tooLate = () =>
  finish(messageScreen('too-late', 'warn', 'Too little time left to pay', `This checkout expires in less than a minute, too soon to pay safely. Ask ${merchant()} for a new checkout.`, returnAction()));
const notFound = () => finish(messageScreen('not-found', 'error', 'Checkout not found', 'This payment link is wrong or no longer exists. Use the link the merchant gave you.'));

const termsOf = (t: Parameters<typeof termsFor>[1]) => termsFor(session.payment_options, t);

function setTotal() {
  if (!ui) return;
  const t = payment?.terms;
  const currency = t?.tokenSymbol ?? selected?.token_symbol ?? session.payment_options[0]?.token_symbol ?? '';
  if (ui.items.isConnected) replace(ui.items, lineItems(session, currency));
  setText(ui.total, t ? `Total ${formatUnits(t.amountWei, t.decimals)} ${t.tokenSymbol}` : selected ? `Total ${optionAmount(selected)}` : session.price ? `Total ${session.price}` : '');
}

function route() {
  payment = undefined;
  switch (session.status) {
    case 'COMPLETED':
      return completed();
    case 'EXPIRED':
      return expired();
    case 'CANCELLED':
      return cancelled();
    case 'FAILED':
      return failed();
  }
  // A live card order (the session stays OPEN while it is processing or held): continue it.
  if (session.order?.flow?.startsWith('FIAT_') && LIVE_ORDER.includes(session.order.status)) return void startCard(cardCtx(), { resume: true });
  // A live order: continue it. An expired or cancelled one (session still BOUND): bind again.
  const t = session.order && LIVE_ORDER.includes(session.order.status) ? termsOf(session.order) : undefined;
  if (t) {
    const tx = sentTx.get(storage(), t.orderId);
    payment = { terms: t, showQr: true, ...(tx ? { txHash: tx } : {}) };
    showPay();
    return startPolling();
  }
  const left = secondsLeft(session.expires_at, Date.now() + api.clockOffset);
  if (left <= 0) return expired();
  if (left < MIN_PAYMENT_WINDOW_SECONDS) return tooLate();
  if (session.payment_options.length === 0 && fiat())
    return setScreen(cardOnlyScreen(session, () => void startCard(cardCtx())));
  if (session.payment_options.length === 0)
    return finish(messageScreen('no-options', 'warn', 'Token payment unavailable', `This checkout offers no token payment. Contact ${merchant()} to pay another way.`, returnAction()));
  showChoose();
}

function showChoose() {
  selected = session.payment_options.find((o) => selected && optionKey(o) === optionKey(selected)) ?? session.payment_options[0]!;
  const v = chooseScreen(session, selected, {
    onSelect: (o) => {
      selected = o;
      setText(v.heading, payLine(o));
      setTotal();
      renderWallets();
    },
    onWallet: payWithWallet,
    onQr: (raw) => {
      const fieldError = (text: string) => {
        v.err.hidden = false;
        setText(v.err, text);
        v.input.setAttribute('aria-invalid', 'true');
        v.input.focus();
      };
      // Sent as typed (trimmed): the server checks the EIP-55 checksum of a mixed-case address,
      // which catches most typos without a keccak implementation in this bundle.
      const from = raw.trim();
      if (selected && isSolanaOption(selected)) {
        if (!isSolanaAddress(from)) return fieldError('Enter a Solana address: 32 to 44 base58 characters.');
      } else if (!isAddress(from)) return fieldError('Enter an address: 0x followed by 40 hexadecimal characters (0-9, a-f).');
      v.err.hidden = true;
      v.input.removeAttribute('aria-invalid');
      void payByQr(from, fieldError);
    },
  });
  if (fiat()) v.node.appendChild(cardMethod(session, () => void startCard(cardCtx())));
  walletSlot = v.wallets;
  if (ui?.cancel) ui.cancel.hidden = false; // back from an attempt that expired: nothing was sent
  setTotal();
  setScreen(v.node);
  renderWallets();
}

const fiat = () => session.payment_rails.includes('fiat');
function cardCtx(): CardContext {
  const refused = (e: ApiError) => api.session().then((s) => ((session = s), route(), !finished && say(e.message)), () => say(e.message));
  const back = session.payment_options.length ? () => (setTotal(), showChoose()) : undefined;
  return { api, session: () => session, setScreen, say, summary: () => ui, paid: () => ((cardPaid = true), ui?.cancel?.remove(), tick()), completed: () => completed(undefined, true), failed, expired, refused, back };
}

function renderWallets() {
  if (!walletSlot?.isConnected) return;
  // EIP-1193 wallets pay on EVM chains, Wallet Standard wallets (solana-pay.ts) on Solana.
  if (selected && isSolanaOption(selected)) replace(walletSlot, solanaWalletArea(selected, api, busy, payWith));
  else replace(walletSlot, walletButtons(wallets, busy, payWithWallet));
}

function showPay() {
  const p = payment!;
  const t = p.terms;
  const amount = formatUnits(t.amountWei, t.decimals);
  setTotal();
  // "Cancel and return" after the transfer left the wallet would read as a way to undo it.
  if (ui?.cancel) ui.cancel.hidden = !!p.txHash;
  setScreen(
    payScreen({
      amount,
      chainId: t.chainId,
      chainName: t.chainName,
      ...(t.explorerUrl ? { explorerUrl: t.explorerUrl } : {}),
      notify: say,
      tokenSymbol: t.tokenSymbol,
      tokenContract: t.tokenContract,
      payTo: t.payTo,
      link: t.paymentUrl ?? buildEip681Transfer({ tokenContract: t.tokenContract, chainId: t.chainId, payTo: t.payTo, amountWei: t.amountWei }),
      solana: !!t.paymentUrl,
      showQr: p.showQr,
      ...(p.from ? { from: p.from } : {}),
      ...(p.txHash ? { txHash: p.txHash } : {}),
      ...(p.sender ? { wallet: { name: p.sender.name, busy, onRetry: () => void sendWithWallet() } } : {}),
    }),
  );
}

/**
 * Binds the session to `from` for `option`; on failure explains and returns undefined. A refused
 * `from_address` goes to `onAddressError` when given (the QR form shows it under its field).
 */
async function bind(option: PaymentOption, from: string, onAddressError?: (msg: string) => void): Promise<Terms | undefined> {
  say('Preparing your payment…');
  let b: BindTerms;
  try {
    b = await api.bind({ chain_id: option.chain_id, token_symbol: option.token_symbol, from_address: from });
  } catch (e) {
    if (onAddressError && e instanceof ApiError && e.status === 400 && e.param === 'from_address') {
      say('');
      onAddressError('This address is not valid. Check it, or paste it again (mixed-case letters must match the checksum).');
    } else await actionFailed(e);
    return undefined;
  }
  return termsOf(b);
}

async function actionFailed(e: unknown) {
  if (!(e instanceof ApiError)) return say(walletErrorMessage(e));
  if (e.status === 404) return notFound();
  if (e.status === 429) return say(`Too many attempts. Try again in ${e.retryAfter ?? 'a few'} seconds.`);
  if (e.status === 0) return say('Tollgate could not be reached. Check your connection and try again.');
  if (e.status === 409 || e.status === 410) {
    const msg = e.status === 409 ? 'This checkout is already being paid from another address or with another token. Pay with the details below.' : e.message;
    try {
      session = await api.session();
    } catch {
      return say(msg);
    }
    route();
    if (!finished) say(msg);
    return;
  }
  say(e.message);
}

async function payByQr(from: string, onAddressError: (msg: string) => void) {
  if (busy || !selected) return;
  busy = true;
  try {
    const t = await bind(selected, from, onAddressError);
    if (!t) return;
    payment = { terms: t, from: t.paymentUrl ? from : from.toLowerCase(), showQr: true };
    showPay();
    say('Waiting for your payment…');
    startPolling();
  } finally {
    busy = false;
  }
}

const payWithWallet = (w: Wallet) => payWith(w.info.name, prepareEvmWallet(w, say));
/** A wallet payment: connect (`prepare`), bind the session to the wallet's address, then send. */
async function payWith(name: string, prepare: (option: PaymentOption) => Promise<PreparedWallet>) {
  if (busy || !selected) return;
  const option = selected;
  busy = true;
  renderWallets();
  try {
    say(`Connect ${name} to continue…`);
    const { from, send } = await prepare(option);
    const t = await bind(option, from);
    if (!t) return;
    payment = { terms: t, from, sender: { name, send }, showQr: false };
    startPolling();
  } catch (e) {
    return void say(walletErrorMessage(e));
  } finally {
    busy = false;
    renderWallets();
  }
  await sendWithWallet();
}

async function sendWithWallet() {
  const p = payment;
  if (!p?.sender || busy || finished) return;
  busy = true;
  showPay();
  say(`Confirm the transfer in ${p.sender.name}.`);
  try {
    p.txHash = await p.sender.send(p.terms);
    sentTx.set(storage(), p.terms.orderId, p.txHash);
    say('Payment sent. Waiting for the network to confirm it…');
  } catch (e) {
    await actionFailed(e); // a wallet's refusal, or Tollgate's (e.g. the order was paid meanwhile)
  } finally {
    busy = false;
    if (!finished) showPay();
  }
}

function startPolling() {
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

function onStatus(st: StatusProjection) {
  if (finished) return;
  if (st.status === 'COMPLETED') return completed(st.tx_hash);
  if (st.status === 'EXPIRED') return expired();
  if (st.status === 'CANCELLED') return cancelled();
  if (st.status === 'FAILED') return failed();
  if (payment && !LIVE_ORDER.includes(st.order_status ?? '')) {
    // The order behind this attempt expired or was cancelled: the session can be paid again.
    if (pollTimer) clearTimeout(pollTimer);
    pollTimer = undefined;
    payment = undefined;
    void api.session().then((s) => {
      session = s;
      route();
      say('Your previous payment attempt expired. Choose again.');
    }, () => {});
    return;
  }
  if (st.tx_hash && payment && !payment.seen) {
    payment.seen = true;
    tick(); // hides the countdown now rather than at the next second
  }
  if (st.tx_hash && payment && !payment.txHash) {
    // The watcher saw the transfer (e.g. after a reload, or paid by QR): no second payment offered.
    payment.txHash = st.tx_hash;
    showPay();
  }
  if (st.order_status === 'PAYMENT_CONFIRMED') say('Payment received. Waiting for final confirmation…');
  else if (st.tx_hash) say('Payment seen on the network. Waiting for confirmations…');
  else if (!payment?.txHash && !busy) say('Waiting for your payment…');
}

function tick() {
  if (!ui || finished) return;
  // A transfer on chain is judged by its block time, not by when it confirms: once the watcher has
  // seen it, a running clock would only worry the payer. (A hash from the wallet alone is not
  // enough: the transaction may still be mined after the window.)
  if (payment?.seen || cardPaid) {
    ui.timer.hidden = true;
    return;
  }
  const t = payment?.terms;
  const end = t ? Math.min(t.expiresAt, session.expires_at) : session.expires_at;
  const left = secondsLeft(end, Date.now() + api.clockOffset);
  ui.timer.hidden = false;
  setText(ui.timer, left > 0 ? `Time left to pay: ${formatCountdown(left)}` : 'Time is up');
  if (left <= 60 && left > 0 && !warnedMinute) {
    warnedMinute = true;
    say('Less than a minute left to pay.');
  }
  if (!payment && left > 0 && left < MIN_PAYMENT_WINDOW_SECONDS && screenId === 'choose' && !busy) return tooLate();
  if (left === 0) {
    if (!payment) return expired();
    say('The payment window has closed. If you already sent the payment, keep this page open while it is checked.');
  }
}

async function boot() {
  const id = checkoutIdFromHash(location.hash);
  if (!id) {
    return bare(messageScreen('bad-link', 'error', 'This payment link is incomplete', 'Open the full link the merchant gave you, including the part after “#”.'));
  }
  api = checkoutApi(location.href, id);
  replace(mount, h('p', { class: 'loading', role: 'status' }, 'Loading checkout…'));
  try {
    session = await api.session();
  } catch (e) {
    return bare(loadErrorScreen(e instanceof ApiError ? e : new ApiError(0, 'network_error', String(e)), () => location.reload()));
  }
  document.title = `Pay ${session.merchant.name}`;
  ui = shell(session, location.origin);
  replace(mount, ui.root);
  setTotal();
  discoverWallets(window as unknown as Parameters<typeof discoverWallets>[0], (list) => {
    wallets = list;
    renderWallets();
  });
  watchSolanaWallets(renderWallets);
  route();
  if (!finished) {
    tick();
    tickTimer = setInterval(tick, 1000);
  }
}

window.addEventListener('hashchange', () => location.reload());
void boot();
