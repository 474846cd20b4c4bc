// One payment by token, from the choice to the status reports: bind the session to the paying
// address (typed for a QR payment, or the connected wallet's), show the order's terms, send from
// the wallet, and follow the transfer through the `/status` poll (polling.ts). One wallet flow
// serves EVM wallets (evm-pay.ts) and Solana wallets (solana-pay.ts).
import { ApiError } from '../lib/api.ts';
import { buildEip681Transfer } from '../lib/eip681.ts';
import { formatUnits } from '../lib/money.ts';
import { sentTx, type PreparedWallet, type Terms } from '../lib/terms.ts';
import { LIVE_ORDER, type BindTerms, type PaymentOption, type StatusProjection } from '../lib/types.ts';
import { discoverWallets, walletErrorMessage, type Wallet } from '../lib/wallet.ts';
import { isSolanaOption } from '../lib/address.ts';
import { tick } from './countdown.ts';
import { replace, sessionStore as storage } from './dom.ts';
import { prepareEvmWallet } from './evm-pay.ts';
import { cancelled, completed, expired, failed, notFound } from './outcomes.ts';
import { api, busy, finished, payment, refresh, reroute, say, selected, setBusy, setPayment, setScreen, setTotal, termsOf, ui } from './page.ts';
import { startPolling, stopPolling } from './polling.ts';
import { solanaWalletArea, watchSolanaWallets } from './solana-pay.ts';
import { payScreen, walletButtons } from './views.ts';

let wallets: Wallet[] = [];
let walletSlot: HTMLElement | undefined;

/** Finds the page's wallets (EIP-6963 and Wallet Standard) and redraws their buttons as they come and go. */
export function watchWallets() {
  discoverWallets(window as unknown as Parameters<typeof discoverWallets>[0], (list) => {
    wallets = list;
    renderWallets();
  });
  watchSolanaWallets(renderWallets);
}

/** The wallet buttons of the selected option, in `slot` (the choose screen's) or the last one given. */
export function renderWallets(slot = walletSlot) {
  walletSlot = slot;
  if (!walletSlot?.isConnected) return;
  // EIP-1193 wallets pay on EVM chains, Wallet Standard wallets (solana-pay.ts) on Solana.
  if (selected && isSolanaOption(selected)) replace(walletSlot, solanaWalletArea(selected, api, busy, payWith));
  else replace(walletSlot, walletButtons(wallets, busy, payWithWallet));
}

/** A live order found on load (a reload, or another tab bound it): its terms, and the poll. */
export function resumePayment(t: Terms) {
  const tx = sentTx.get(storage(), t.orderId);
  setPayment({ terms: t, showQr: true, ...(tx ? { txHash: tx } : {}) });
  showPay();
  startPolling(onStatus);
}

function showPay() {
  const p = payment!;
  const t = p.terms;
  const amount = formatUnits(t.amountWei, t.decimals);
  setTotal();
  tick(); // the order's window from now, not at the next second (no stale checkout countdown)
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
  if (e.code === 'order_conflict') {
    // Not this session: another live order with the same payer, amount and token that Tollgate may
    // not replace (the merchant's own, or one being paid). A payer's own earlier unpaid checkout
    // never lands here: the new bind supersedes it (docs/hosted-checkout.md).
    return void (await refresh('An earlier payment of this amount from this address to this merchant is still open, so this checkout cannot be paid from it yet. Pay from another address, or try again once that payment has completed or expired.'));
  }
  if (e.status === 409 || e.status === 410) {
    // The session moved on without this page: show what it is now, then why.
    return void (await refresh(e.status === 409 ? 'This checkout is already being paid from another address or with another token. Pay with the details below.' : e.message));
  }
  say(e.message);
}

/** The QR path: bind to the typed address, then show the terms and the QR code. */
export async function payByQr(from: string, onAddressError: (msg: string) => void) {
  if (busy || !selected) return;
  setBusy(true);
  try {
    const t = await bind(selected, from, onAddressError);
    if (!t) return;
    setPayment({ terms: t, from: t.paymentUrl ? from : from.toLowerCase(), showQr: true });
    showPay();
    say('Waiting for your payment…');
    startPolling(onStatus);
  } finally {
    setBusy(false);
  }
}

export const payWithWallet = (w: Wallet) => payWith(w.info.name, prepareEvmWallet(w, say));
/** A wallet payment: connect (`prepare`), bind the session to the wallet's address, then send. */
async function payWith(name: string, prepare: (option: PaymentOption) => Promise<PreparedWallet>) {
  if (busy || !selected) return;
  const option = selected;
  setBusy(true);
  renderWallets();
  try {
    say(`Connect ${name} to continue…`);
    const { from, send } = await prepare(option);
    const t = await bind(option, from);
    if (!t) return;
    setPayment({ terms: t, from, sender: { name, send }, showQr: false });
    startPolling(onStatus);
  } catch (e) {
    return void say(walletErrorMessage(e));
  } finally {
    setBusy(false);
    renderWallets();
  }
  await sendWithWallet();
}

async function sendWithWallet() {
  const p = payment;
  if (!p?.sender || busy || finished) return;
  setBusy(true);
  showPay();
  say(`Confirm the transfer in ${p.sender.name}.`);
  try {
    p.txHash = await p.sender.send(p.terms);
    sentTx.set(storage(), p.terms.orderId, p.txHash);
    say('Payment sent. Waiting for the network to confirm it…');
  } catch (e) {
    await actionFailed(e); // a wallet's refusal, or Tollgate's (e.g. the order was paid meanwhile)
  } finally {
    setBusy(false);
    if (!finished) showPay();
  }
}

/** What a `/status` report means for the attempt: the end of the page, or progress to show. */
function onStatus(st: StatusProjection) {
  if (finished) return;
  if (st.status === 'COMPLETED') return completed(st.tx_hash);
  if (st.status === 'EXPIRED') return expired();
  if (st.status === 'CANCELLED') return cancelled();
  if (st.status === 'FAILED') return failed();
  if (payment && !LIVE_ORDER.includes(st.order_status ?? '')) {
    // The order behind this attempt expired or was cancelled: the session can be paid again.
    stopPolling();
    setPayment(undefined);
    void api.session().then(
      (s) => {
        reroute(s);
        say('Your previous payment attempt expired. Choose again.');
      },
      () => {},
    );
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
