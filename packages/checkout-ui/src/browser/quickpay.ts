// The hosted quick-pay link page (`/quickpay/pay/<link id>`): shows what the link sells (or takes
// an amount), lets the payer choose rail, token and network, opens a quick-pay session and then
// walks through the same payment screens as the checkout page. The session id is kept in the
// fragment (`#qps_…`) so a reload resumes the attempt instead of offering a second payment.
// Nothing on this page is a proof of payment: the merchant verifies with Tollgate.
import { ApiError } from '../lib/api.ts';
import { startCard } from './card-method.ts';
import { loadChunk } from './chunk.ts';
import { isAddress, isSolanaAddress, isSolanaOption } from '../lib/address.ts';
import { networkName } from '../lib/chains.ts';
import { formatCountdown, secondsLeft } from '../lib/countdown.ts';
import { buildEip681Transfer } from '../lib/eip681.ts';
import { formatUnits } from '../lib/money.ts';
import { amountProblem, idempotencyKey, linkIdFromPath, quickpayApi, sessionIdFromHash, type PublicLink, type QuickPayApi, type QuickPayOption, type QuickPaySession } from '../lib/quickpay.ts';
import { optionKey, sentTx, type Terms } from '../lib/terms.ts';
import { connect, discoverWallets, ensureChain, sendTransfer, walletErrorMessage, type Wallet } from '../lib/wallet.ts';
import { clearError, fieldError, h, replace, sessionStore as storage, setText } from './dom.ts';
import { QuickPayCard } from './quickpay-card.ts';
import { recall, remember, sessionTerms } from './quickpay-session.ts';
import { linkPrice, linkScreen } from './quickpay-views.ts';
import type * as Receipt from './receipt.ts';
import { addressPlaceholder, messageScreen, payScreen, shell, walletButtons } from './views.ts';

const POLL_MS = 2000;
const mount = document.getElementById('app')!;
const pageNonce = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join('');

let api: QuickPayApi;
let link: PublicLink;
let ui: ReturnType<typeof shell> | undefined;
let selected: QuickPayOption | undefined;
let wallets: Wallet[] = [];
let view: ReturnType<typeof linkScreen> | undefined;
let busy = false;
let finished = false;
let payment: { sessionId: string; terms: Terms; from?: string; wallet?: Wallet; txHash?: string; showQr: boolean } | undefined;
let pollTimer: ReturnType<typeof setTimeout> | undefined;

const say = (text: string) => ui && setText(ui.live, text);
const merchant = () => link?.merchant.name ?? 'the merchant';
// The card rail (quickpay-card.ts): the checkout page's card screens over a quick-pay card session.
const card = new QuickPayCard({
  api: () => api,
  link: () => link,
  pageNonce,
  takeMemo: () => (memo = view?.memo.input.value.trim() || undefined),
  setScreen: (node) => setScreen(node),
  say,
  total: () => ui?.total,
  finish: (node) => finish(node),
  completed: (orderId, last4) => confirmed(undefined, orderId, last4),
  failed: () => cardFailed(),
  expired: () => expired(),
  showLink: () => showLink(),
});

function setScreen(node: HTMLElement, focus = true) {
  if (!ui) return;
  replace(ui.screen, node);
  if (focus) node.querySelector<HTMLElement>('h2')?.focus();
}

function finish(node: HTMLElement) {
  finished = true;
  if (pollTimer) clearTimeout(pollTimer);
  if (ui) ui.timer.hidden = true;
  say('');
  setScreen(node);
}

const expired = () => finish(messageScreen('expired', 'warn', 'This payment has expired', `Start no new payment on this attempt. If you already sent a payment, contact ${merchant()} with your transaction.`, { label: 'Start again', onclick: restart }));
const failed = () => finish(messageScreen('failed', 'error', 'The payment failed', `Do not send funds for this attempt. Contact ${merchant()}.`));
const cardFailed = () =>
  finish(
    messageScreen('failed', 'error', 'The card payment failed', `This attempt ended without completing your order (the card processor declined it). Start again to try another card, or contact ${merchant()} if your card was charged.`, {
      label: 'Start again',
      onclick: restart,
    }),
  );
/** The final screen with the payer's receipt (receipt.ts): what the page knows of the payment. */
function confirmed(txHash?: string, orderId?: string, last4?: string) {
  const t = payment?.terms;
  const byCard = !!card.session;
  // After a reload: what this tab noted when the session opened (remember()).
  const kept = byCard ? undefined : recall();
  if (!t && kept?.amount) setTotal(`Total ${kept.amount}`);
  // The heading first, the receipt when its chunk (chunk.ts) has loaded: as on the checkout page,
  // the receipt's code stays out of the first download.
  finish(h('section', { 'aria-labelledby': 'done-h', class: 'result tone-ok', 'data-screen': 'completed' }, h('h2', { id: 'done-h', tabindex: -1 }, 'Payment complete')));
  void loadChunk<typeof Receipt>('receipt').then(
    (r) =>
      setScreen(
        r.doneScreen({
          merchant: merchant(),
          item: link.product?.name,
          amount: byCard ? `${link.fiat_amount} ${link.fiat_currency}` : t ? `${formatUnits(t.amountWei, t.decimals)} ${t.tokenSymbol}` : kept?.amount,
          method: byCard ? (last4 ? `Card ending ${last4}` : 'Card') : t ? `${t.tokenSymbol} on ${t.chainName}` : kept?.method,
          reference: orderId ?? t?.orderId ?? card.order,
          payerReference: memo ?? kept?.memo,
          txHash: payment?.txHash ?? txHash,
          explorerUrl: t?.explorerUrl ?? selected?.explorer_url,
          card: byCard,
          at: Date.now(),
        }),
      ),
    () => undefined, // the heading says it all; the receipt is a convenience
  );
}
/** The payer's reference as sent with the session (shown on the receipt). */
let memo: string | undefined;

function restart() {
  history.replaceState(null, '', location.pathname);
  location.reload();
}

const termsOf = (s: QuickPaySession) => sessionTerms(s, link);

/** What the session shows: terms while OPEN; its end otherwise. */
function onSession(s: QuickPaySession) {
  if (s.status === 'PAYMENT_CONFIRMED' || s.status === 'COMPLETED') return confirmed(s.tx_hash, s.order_id);
  if (s.status === 'EXPIRED') return expired();
  if (s.status === 'FAILED') return failed();
  if (payment && s.tx_hash && !payment.txHash) {
    payment.txHash = s.tx_hash;
    showPay();
  }
  if (s.tx_hash) say('Payment seen on the network. Waiting for confirmations…');
  else if (!payment?.txHash && !busy) say('Waiting for your payment…');
}

function showPay() {
  const p = payment!;
  const t = p.terms;
  if (view) view = undefined;
  tick(); // the order's countdown with the pay screen, not a second later
  setScreen(
    payScreen({
      amount: formatUnits(t.amountWei, t.decimals),
      chainId: t.chainId,
      chainName: t.chainName,
      ...(t.explorerUrl ? { explorerUrl: t.explorerUrl } : {}),
      notify: say,
      tokenSymbol: t.tokenSymbol,
      tokenContract: t.tokenContract,
      payTo: t.payTo,
      link: t.paymentUrl ?? buildEip681Transfer({ tokenContract: t.tokenContract, chainId: t.chainId, payTo: t.payTo, amountWei: t.amountWei }),
      ...(t.paymentUrl ? { solana: true } : {}),
      showQr: p.showQr,
      ...(p.from ? { from: p.from } : {}),
      ...(p.txHash ? { txHash: p.txHash } : {}),
      ...(p.wallet ? { wallet: { name: p.wallet.info.name, busy, onRetry: () => void sendWithWallet() } } : {}),
    }),
  );
}

function startPolling() {
  if (!pollTimer && !finished) pollTimer = setTimeout(poll, POLL_MS);
}

async function poll() {
  let delay = POLL_MS;
  try {
    if (payment) onSession(await api.session(payment.sessionId));
  } catch (e) {
    if (e instanceof ApiError && e.status === 429) delay = (e.retryAfter ?? 5) * 1000;
    else say('Connection problem. Still checking for your payment…');
  }
  pollTimer = undefined;
  if (!finished && payment) pollTimer = setTimeout(poll, delay);
}

/** Opens (or, for the same inputs, re-reads) the session; undefined when refused (explained). */
async function openSession(from: string): Promise<QuickPaySession | undefined> {
  const v = view!;
  const option = selected!;
  let amount: string | undefined;
  if (v.amount) {
    const problem = amountProblem(v.amount.input.value, link.min_amount!, link.max_amount!);
    if (problem) return void fieldError(v.amount, problem);
    clearError(v.amount);
    amount = v.amount.input.value.trim();
  }
  memo = v.memo.input.value.trim() || undefined;
  const body: Record<string, unknown> = { rail: 'crypto', chain_id: option.chain_id, token_symbol: option.token_symbol, from_address: from, ...(amount ? { amount } : {}), ...(memo ? { memo } : {}) };
  body.idempotency_key = idempotencyKey(pageNonce, body);
  say('Preparing your payment…');
  try {
    return await api.open(body);
  } catch (e) {
    if (!(e instanceof ApiError)) return void say(walletErrorMessage(e));
    if (e.param === 'amount' && v.amount) return void (say(''), fieldError(v.amount, e.message));
    if (e.param === 'from_address') return void (say(''), fieldError(v.payer, 'This address is not valid. Check it, or paste it again (mixed-case letters must match the checksum).'));
    if (e.param === 'memo') return void (say(''), fieldError(v.memo, e.message));
    if (e.status === 410) return void finish(messageScreen('unavailable', 'warn', 'This link takes no more payments', e.message));
    if (e.status === 429) return void say(`Too many attempts. Try again in ${e.retryAfter ?? 'a few'} seconds.`);
    if (e.status === 0) return void say('Tollgate could not be reached. Check your connection and try again.');
    return void say(e.message);
  }
}

function begin(s: QuickPaySession, from: string, wallet?: Wallet) {
  const t = termsOf(s);
  if (s.status !== 'OPEN' || !t) return onSession(s);
  history.replaceState(null, '', `${location.pathname}#${s.session_id}`);
  remember(t, memo);
  setTotal(`Total ${formatUnits(t.amountWei, t.decimals)} ${t.tokenSymbol}`);
  const tx = sentTx.get(storage(), t.orderId);
  payment = { sessionId: s.session_id, terms: t, from: t.paymentUrl ? from : from.toLowerCase(), showQr: !wallet, ...(wallet ? { wallet } : {}), ...(tx ? { txHash: tx } : {}) };
  showPay();
  startPolling();
}

async function payByQr(raw: string) {
  if (busy || !view) return;
  const from = raw.trim();
  if (selected && isSolanaOption(selected)) {
    if (!isSolanaAddress(from)) return fieldError(view.payer, 'Enter a Solana address: 32 to 44 base58 characters.');
  } else if (!isAddress(from)) return fieldError(view.payer, 'Enter an address: 0x followed by 40 hexadecimal characters (0-9, a-f).');
  clearError(view.payer);
  busy = true;
  try {
    const s = await openSession(from);
    if (s) begin(s, from);
  } finally {
    busy = false;
  }
  if (payment) say('Waiting for your payment…');
}

async function payWithWallet(w: Wallet) {
  if (busy || !selected || !view) return;
  const option = selected;
  busy = true;
  renderWallets();
  let s: QuickPaySession | undefined;
  let from = '';
  try {
    say(`Connect ${w.info.name} to continue…`);
    from = await connect(w.provider);
    say(`Switch ${w.info.name} to ${networkName(option)} if it asks.`);
    await ensureChain(w.provider, option.chain_id);
    s = await openSession(from);
  } catch (e) {
    say(walletErrorMessage(e));
  } finally {
    busy = false;
    renderWallets();
  }
  if (!s) return;
  begin(s, from, w);
  if (payment && !payment.txHash) await sendWithWallet();
}

async function sendWithWallet() {
  const p = payment;
  if (!p?.wallet || !p.from || busy || finished) return;
  busy = true;
  showPay();
  say(`Confirm the transfer in ${p.wallet.info.name}.`);
  try {
    await ensureChain(p.wallet.provider, p.terms.chainId);
    p.txHash = await sendTransfer(p.wallet.provider, { from: p.from, tokenContract: p.terms.tokenContract, payTo: p.terms.payTo, amountWei: p.terms.amountWei });
    sentTx.set(storage(), p.terms.orderId, p.txHash);
    say('Payment sent. Waiting for the network to confirm it…');
  } catch (e) {
    say(walletErrorMessage(e));
  } finally {
    busy = false;
    if (!finished) showPay();
  }
}

function renderWallets() {
  if (!view?.wallets.isConnected) return;
  // The browser wallets found here are EVM wallets (EIP-6963): a Solana option is paid by QR code or link.
  if (selected && isSolanaOption(selected)) replace(view.wallets, h('p', { class: 'muted' }, 'Pay on Solana with the QR code below: scan it or open it in your wallet app.'));
  else
    replace(
      view.wallets,
      walletButtons(wallets, busy, (w) => void payWithWallet(w)),
    );
}

/**
 * The summary's total (the product's name stays above it on every screen). A link without a
 * product shows the summary only once there is an amount to show.
 */
function setTotal(text: string) {
  if (!ui) return;
  setText(ui.total, text);
  const box = ui.total.parentElement;
  if (box) box.hidden = !text && !link.product;
}
/** The total before a payment starts: the fixed price in the chosen token, or the card price. */
const priceTotal = (o: QuickPayOption | undefined) => (!o || o.amount_wei ? `Total ${linkPrice(link, o)}` : '');

function showLink() {
  selected ??= link.payment_rails.includes('crypto') ? link.payment_options[0] : undefined;
  setTotal(priceTotal(selected));
  view = linkScreen(link, selected, location.origin, {
    onSelect: (o) => {
      selected = o;
      if (view) {
        setText(view.price, linkPrice(link, o));
        view.payer.input.placeholder = addressPlaceholder(o);
        renderWallets();
      }
      setTotal(priceTotal(o));
    },
    onQr: (raw) => void payByQr(raw),
    onCard: () => void startCard(card.context()),
    notify: say,
  });
  setScreen(view.node, false);
  renderWallets();
}

function tick() {
  if (!ui || finished || !payment) {
    if (ui) ui.timer.hidden = true;
    return;
  }
  const left = secondsLeft(payment.terms.expiresAt, Date.now() + api.clockOffset);
  ui.timer.hidden = !!payment.txHash;
  setText(ui.timer, left > 0 ? `Time left to pay: ${formatCountdown(left)}` : 'Time is up');
}

async function boot() {
  const id = linkIdFromPath(location.pathname);
  const bare = (node: HTMLElement) => {
    ui = shell(undefined, location.origin);
    replace(mount, ui.root);
    setScreen(node, false);
  };
  if (!id) return bare(messageScreen('bad-link', 'error', 'This payment link is incomplete', 'Open the full link the merchant gave you.'));
  api = quickpayApi(location.href, id);
  replace(mount, h('p', { class: 'loading', role: 'status' }, 'Loading…'));
  try {
    link = await api.link();
  } catch (e) {
    const status = e instanceof ApiError ? e.status : 0;
    if (status === 404) return bare(messageScreen('not-found', 'error', 'Payment link not found', 'This payment link is wrong or no longer exists. Use the link the merchant gave you.'));
    return bare(messageScreen('unreachable', 'error', 'Payment unavailable', 'Tollgate could not load this payment link right now. Try again in a moment.', { label: 'Try again', onclick: () => location.reload() }));
  }
  document.title = link.product ? `${link.product.name} · ${link.merchant.name}` : `Pay ${link.merchant.name}`;
  // The product's name in the summary, on every screen (link, pay, card, final); its total follows
  // the token chosen, then the amount being paid.
  ui = shell({ merchant: link.merchant, line_items: link.product ? [{ name: link.product.name, quantity: 1 }] : [] } as unknown as Parameters<typeof shell>[0], location.origin);
  if (link.product) replace(ui.items, h('li', {}, h('span', { class: 'item-name', id: 'product-name' }, link.product.name)));
  setTotal('');
  const eyebrow = ui.root.querySelector('.eyebrow');
  if (eyebrow) eyebrow.textContent = 'Payment link';
  replace(mount, ui.root);
  discoverWallets(window as unknown as Parameters<typeof discoverWallets>[0], (list) => {
    wallets = list;
    renderWallets();
  });
  setInterval(tick, 1000);
  const resume = sessionIdFromHash(location.hash);
  if (resume) {
    try {
      const s = await api.session(resume);
      if (s.rail === 'card') {
        card.session = s.session_id;
        if (s.status === 'OPEN') return void startCard(card.context(), { resume: true });
        return s.status === 'FAILED' ? cardFailed() : onSession(s);
      }
      const t = termsOf(s);
      selected = link.payment_options.find((o) => t && optionKey(o) === optionKey({ chain_id: t.chainId, token_symbol: t.tokenSymbol })) ?? link.payment_options[0];
      if (s.status === 'OPEN' && t) {
        const tx = sentTx.get(storage(), t.orderId);
        payment = { sessionId: s.session_id, terms: t, showQr: true, ...(tx ? { txHash: tx } : {}) };
        setTotal(`Total ${formatUnits(t.amountWei, t.decimals)} ${t.tokenSymbol}`);
        showPay();
        startPolling();
        return;
      }
      return onSession(s);
    } catch {
      history.replaceState(null, '', location.pathname); // unknown attempt: start from the link
    }
  }
  if (link.state !== 'ACTIVE') {
    const text = { INACTIVE: 'The merchant has turned this payment link off.', EXPIRED: 'This payment link has expired.', SOLD_OUT: 'This payment link has reached its limit or the product is sold out.' }[link.state];
    return finish(messageScreen('unavailable', 'warn', 'This link takes no more payments', text));
  }
  const crypto = link.payment_rails.includes('crypto') && link.payment_options.length > 0;
  if (!crypto && !(link.payment_rails.includes('card') && link.fiat_amount)) return finish(messageScreen('no-options', 'warn', 'Payment unavailable', `This link offers no way to pay right now. Contact ${merchant()}.`));
  showLink();
}

void boot();
