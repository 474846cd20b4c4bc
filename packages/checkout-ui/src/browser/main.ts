// The hosted checkout page: reads the checkout id from the URL fragment, loads the public session
// view and walks the payer through OPEN → BOUND → COMPLETED. This module is the router: it decides
// from the session which screen shows (choose, pay, card, or a final one). The state it routes on is
// page.ts's; the token payment and its status poll are pay.ts and polling.ts; the countdown is
// countdown.ts; the final screens are outcomes.ts; views.ts builds the DOM. Nothing on this page is
// a proof of payment (docs/hosted-checkout.md): the merchant verifies with Tollgate server-side.
import { ApiError, checkoutApi, checkoutIdFromHash } from '../lib/api.ts';
import { isAddress, isSolanaAddress, isSolanaOption } from '../lib/address.ts';
import { secondsLeft } from '../lib/countdown.ts';
import { LIVE_ORDER, MIN_PAYMENT_WINDOW_SECONDS, type PublicSession } from '../lib/types.ts';
import { optionKey } from '../lib/terms.ts';
import { clearError, fieldError, h, replace, setText } from './dom.ts';
import { cardMethod, cardOnlyScreen, startCard, type CardContext } from './card-method.ts';
import { paidByCard, startCountdown } from './countdown.ts';
import { cancelled, completed, expired, failed, noOptions, tooLate } from './outcomes.ts';
import { connectOpener } from './opener.ts';
import { api, bare, mount, open, refresh, say, select, selected, session, setPayment, setRouter, setScreen, setTotal, termsOf, ui } from './page.ts';
import { payByQr, payWithWallet, renderWallets, resumePayment, watchWallets } from './pay.ts';
import { addressPlaceholder, chooseScreen, loadErrorScreen, messageScreen, payLine } from './views.ts';

function route() {
  setPayment(undefined);
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
  if (t) return resumePayment(t);
  const left = secondsLeft(session.expires_at, Date.now() + api.clockOffset);
  if (left <= 0) return expired();
  if (left < MIN_PAYMENT_WINDOW_SECONDS) return tooLate();
  if (session.payment_options.length === 0 && fiat()) return setScreen(cardOnlyScreen(session, () => void startCard(cardCtx())));
  if (session.payment_options.length === 0) return noOptions();
  showChoose();
}

function showChoose() {
  select(session.payment_options.find((o) => selected && optionKey(o) === optionKey(selected)) ?? session.payment_options[0]!);
  const v = chooseScreen(session, selected!, {
    onSelect: (o) => {
      select(o);
      setText(v.heading, payLine(o));
      v.input.placeholder = addressPlaceholder(o);
      setTotal();
      renderWallets();
    },
    onWallet: payWithWallet,
    onQr: (raw) => {
      const invalid = (text: string) => fieldError(v, text);
      // Sent as typed (trimmed): the server checks the EIP-55 checksum of a mixed-case address,
      // which catches most typos without a keccak implementation in this bundle.
      const from = raw.trim();
      if (selected && isSolanaOption(selected)) {
        if (!isSolanaAddress(from)) return invalid('Enter a Solana address: 32 to 44 base58 characters.');
      } else if (!isAddress(from)) return invalid('Enter an address: 0x followed by 40 hexadecimal characters (0-9, a-f).');
      clearError(v);
      void payByQr(from, invalid);
    },
  });
  if (fiat()) v.node.appendChild(cardMethod(session, () => void startCard(cardCtx())));
  if (ui?.cancel) ui.cancel.hidden = false; // back from an attempt that expired: nothing was sent
  setTotal();
  setScreen(v.node);
  renderWallets(v.wallets);
}

const fiat = () => session.payment_rails.includes('fiat');
function cardCtx(): CardContext {
  const back = session.payment_options.length ? () => (setTotal(), showChoose()) : undefined;
  return { api, session: () => session, setScreen, say, summary: () => ui, paid: () => (ui?.cancel?.remove(), paidByCard()), completed: (card) => completed(undefined, true, card), failed, expired, refused: (e: ApiError) => refresh(e.message), back };
}

async function boot() {
  const id = checkoutIdFromHash(location.hash);
  if (!id) {
    return bare(messageScreen('bad-link', 'error', 'This payment link is incomplete', 'Open the full link the merchant gave you, including the part after “#”.'));
  }
  const a = checkoutApi(location.href, id);
  replace(mount, h('p', { class: 'loading', role: 'status' }, 'Loading checkout…'));
  let s: PublicSession;
  try {
    s = await a.session();
  } catch (e) {
    return bare(loadErrorScreen(e instanceof ApiError ? e : new ApiError(0, 'network_error', String(e)), () => location.reload()));
  }
  open(a, s);
  connectOpener(s);
  watchWallets();
  route();
  startCountdown();
}

setRouter(route);
window.addEventListener('hashchange', () => location.reload());
void boot();
