// The screens of the page as pure builders: data and callbacks in, DOM out. The router (main.ts)
// and the payment flow (pay.ts) decide which one shows; page.ts owns the state.
import { logoSrc, safeHttpUrl } from '../lib/api.ts';
import { isSolanaOption } from '../lib/address.ts';
import { explorerTxUrl, networkName } from '../lib/chains.ts';
import { formatUnits } from '../lib/money.ts';
import type { ApiError } from '../lib/api.ts';
import { optionKey } from '../lib/terms.ts';
import type { PaymentOption, PublicSession } from '../lib/types.ts';
import type { Wallet } from '../lib/wallet.ts';
import { copyButton } from './copy.ts';
import { h } from './dom.ts';
import { qrSvg } from './qr.ts';

export const optionAmount = (o: PaymentOption) => `${formatUnits(o.amount_wei, o.decimals)} ${o.token_symbol}`;
/** "Pay 12.50 USDC on Base Sepolia": amount, token and network in one line. */
export const payLine = (o: PaymentOption) => `Pay ${optionAmount(o)} on ${networkName(o)}`;

/** Merchant header, order summary, timer, the screen slot, the live status line and the footer. */
export function shell(s: PublicSession | undefined, pageOrigin: string) {
  const logo = s ? logoSrc(s.merchant.logo_url, pageOrigin) : undefined;
  const img = logo ? h('img', { class: 'logo', src: logo, alt: '', width: 48, height: 48, referrerpolicy: 'no-referrer', decoding: 'async' }) : undefined;
  img?.addEventListener('error', () => img.remove());
  const timer = h('p', { class: 'timer', role: 'timer', 'aria-live': 'off', hidden: true });
  const screen = h('div', { class: 'screen' });
  const live = h('p', { class: 'live', role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
  const total = h('p', { class: 'total' });
  const items = h('ul', { class: 'items' });
  const cancelUrl = s ? safeHttpUrl(s.cancel_url) : undefined;
  const cancel = cancelUrl ? h('a', { href: cancelUrl.toString(), class: 'cancel', rel: 'noreferrer' }, `Cancel and return to ${s!.merchant.name}`) : undefined;
  const root = h(
    'main',
    { class: 'card', 'aria-labelledby': 'merchant-name' },
    h('header', { class: 'merchant' }, img, h('div', {}, h('p', { class: 'eyebrow' }, 'Checkout'), h('h1', { id: 'merchant-name' }, s ? s.merchant.name : 'Tollgate checkout'))),
    s && s.line_items.length > 0
      ? h('section', { class: 'summary', 'aria-labelledby': 'summary-h' }, h('h2', { id: 'summary-h', class: 'visually-hidden' }, 'Order summary'), items, total)
      : s
        ? h('section', { class: 'summary', 'aria-label': 'Order summary' }, total)
        : undefined,
    timer,
    screen,
    live,
    h('footer', { class: 'foot' }, cancel, h('p', { class: 'powered' }, 'Payments by Tollgate')),
  );
  return { root, screen, live, timer, total, items, cancel };
}

/** The paying-address field's example, shaped like an address of the selected option's chain. */
export const addressPlaceholder = (o: { token_contract: string }) => (isSolanaOption(o) ? 'e.g. 7EcD…LtV (base58)' : '0x…');

export interface ChooseHandlers {
  onSelect(o: PaymentOption): void;
  onWallet(w: Wallet): void;
  onQr(address: string): void;
}

/**
 * OPEN: the terms first (heading "Pay 12.50 USDC on Base Sepolia", token/network choice), then the
 * two ways to pay: a browser wallet, or another wallet by QR code after one step that asks for the
 * paying address (Tollgate attributes a transfer by its sender; docs/hosted-checkout.md).
 */
export function chooseScreen(s: PublicSession, selected: PaymentOption, on: ChooseHandlers) {
  const wallets = h('div', { class: 'wallets' }, h('p', { class: 'muted' }, 'Looking for a browser wallet…'));
  const input = h('input', {
    id: 'payer',
    name: 'payer',
    type: 'text',
    autocomplete: 'off',
    autocapitalize: 'off',
    spellcheck: 'false',
    placeholder: addressPlaceholder(selected),
    'aria-describedby': 'payer-help payer-err',
    required: true,
  });
  const err = h('p', { id: 'payer-err', class: 'error', hidden: true });
  const form = h(
    'form',
    { class: 'qr-form', novalidate: true },
    h('label', { for: 'payer' }, 'Your paying address'),
    input,
    h('p', { id: 'payer-help', class: 'muted small' }, 'Paste the address of the wallet you will pay from. The address to pay and the QR code come next.'),
    err,
    h('button', { type: 'submit', class: 'secondary' }, 'Show payment QR code'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    on.onQr(input.value);
  });
  const heading = h('h2', { id: 'choose-h', tabindex: -1 }, payLine(selected));
  const node = h(
    'section',
    { 'aria-labelledby': 'choose-h', 'data-screen': 'choose' },
    heading,
    h(
      'fieldset',
      { class: 'options' },
      h('legend', {}, 'Token and network'),
      s.payment_options.map((o, i) =>
        h(
          'label',
          { class: 'option' },
          h('input', {
            type: 'radio',
            name: 'option',
            value: optionKey(o),
            checked: optionKey(o) === optionKey(selected),
            'data-index': i,
            onchange: () => on.onSelect(o),
          }),
          h('span', { class: 'option-text' }, h('strong', {}, o.token_symbol), ` on ${networkName(o)}`),
          h('span', { class: 'option-amount' }, optionAmount(o)),
        ),
      ),
    ),
    h('div', { class: 'method' }, h('h3', {}, 'Pay with a browser wallet'), wallets),
    h('div', { class: 'method' }, h('h3', {}, 'Pay from another wallet (QR code)'), form),
  );
  return { node, heading, wallets, input, err };
}

/** The wallet buttons, one per discovered wallet. */
export function walletButtons(list: Wallet[], busy: boolean, onWallet: (w: Wallet) => void) {
  if (list.length === 0) return h('p', { class: 'muted' }, 'No browser wallet found on this device. Pay from another wallet with the QR code below.');
  return list.map((w) =>
    h(
      'button',
      { type: 'button', class: 'primary wallet', disabled: busy, 'data-wallet': w.info.rdns || w.info.uuid, onclick: () => onWallet(w) },
      w.info.icon ? h('img', { src: w.info.icon, alt: '', width: 24, height: 24 }) : undefined,
      `Pay with ${w.info.name}`,
    ),
  );
}

export interface PayView {
  amount: string;
  chainId: number;
  chainName: string;
  explorerUrl?: string;
  tokenSymbol: string;
  tokenContract: string;
  payTo: string;
  from?: string;
  link: string;
  txHash?: string;
  showQr: boolean;
  /** Solana: `link` is the order's Solana Pay URL, whose reference key (not the sender) attributes it */
  solana?: boolean;
  wallet?: { name: string; busy: boolean; onRetry(): void };
  /** the live region: "Address copied." */
  notify(text: string): void;
}

/** A link to the transaction on the chain's block explorer, named after the explorer's host. */
function explorerLink(explorer: string | undefined, txHash: string | undefined, id: string) {
  const href = explorerTxUrl(explorer, txHash);
  return href ? h('a', { id, class: 'explorer', href, target: '_blank', rel: 'noopener noreferrer' }, `View the transaction on ${new URL(href).host}`) : undefined;
}

/** BOUND: the order's payment terms with copy buttons, the QR / EIP-681 link, the wallet retry button. */
export function payScreen(v: PayView) {
  const row = (k: string, ...val: (Node | string | undefined)[]) => [h('dt', {}, k), h('dd', {}, ...val)];
  // The chain id too: it is what a wallet shows when it asks to switch networks.
  const network = v.chainName === `Chain ${v.chainId}` ? v.chainName : `${v.chainName} · chain ID ${v.chainId}`;
  const what = `${v.amount} ${v.tokenSymbol}`;
  return h(
    'section',
    { 'aria-labelledby': 'pay-h', 'data-screen': 'pay' },
    h('h2', { id: 'pay-h', tabindex: -1 }, v.txHash ? 'Payment sent' : `Pay ${what} on ${v.chainName}`),
    h(
      'dl',
      { class: 'terms' },
      row('Amount', h('span', { class: 'copyable' }, h('strong', { class: 'amount' }, what), v.txHash ? undefined : copyButton(v.amount, 'amount', v.notify))),
      row('Network', network),
      row('Pay to', h('span', { class: 'copyable' }, h('code', { class: 'addr' }, v.payTo), v.txHash ? undefined : copyButton(v.payTo, 'address', v.notify))),
      row(v.solana ? 'Token mint' : 'Token contract', h('code', { class: 'addr' }, v.tokenContract)),
      v.from ? row('From', h('code', { class: 'addr' }, v.from)) : [],
      v.txHash ? row('Transaction', h('code', { class: 'addr' }, v.txHash), explorerLink(v.explorerUrl, v.txHash, 'explorer')) : [],
    ),
    v.wallet && !v.txHash ? h('button', { type: 'button', class: 'primary', disabled: v.wallet.busy, onclick: () => v.wallet!.onRetry() }, `Send ${what} with ${v.wallet.name}`) : undefined,
    v.showQr && !v.txHash
      ? h('div', { class: 'qr-block' }, h('figure', {}, qrSvg(v.link, `QR code: pay ${what} on ${v.chainName}`), h('figcaption', {}, 'Scan with your wallet app')), h('a', { class: 'button secondary', href: v.link, id: 'eip681' }, 'Open in wallet app'))
      : undefined,
    h(
      'p',
      { class: 'note' },
      // Once sent, the instruction to send becomes an instruction not to send twice.
      v.txHash
        ? 'Do not send this payment again. Keep this page open while the network confirms it.'
        : v.solana
          ? `Pay with the QR code or the link: they carry this order’s reference, which is how Tollgate recognises the payment. Send exactly ${what}.`
          : v.from
            ? `Send exactly ${what} from ${v.from}. A payment from another address or of another amount is not recognised.`
            : `Send exactly ${what} from the address you entered when you started this payment.`,
    ),
  );
}

/** Expired, cancelled, failed, not found, errors: a heading, an explanation, maybe an action. */
export function messageScreen(id: string, tone: 'warn' | 'error', title: string, text: string, action?: { label: string; href?: string; onclick?: () => void }) {
  return h(
    'section',
    { 'aria-labelledby': 'msg-h', class: `result tone-${tone}`, 'data-screen': id },
    h('h2', { id: 'msg-h', tabindex: -1 }, title),
    h('p', {}, text),
    action?.href ? h('a', { class: 'button secondary', href: action.href, rel: 'noreferrer' }, action.label) : undefined,
    action?.onclick ? h('button', { type: 'button', class: 'secondary', onclick: action.onclick }, action.label) : undefined,
  );
}

/** The page could not load the session: not found, expired, rate-limited or unreachable. */
export function loadErrorScreen(err: ApiError, retry: () => void) {
  if (err.status === 404) return messageScreen('not-found', 'error', 'Checkout not found', 'This payment link is wrong or no longer exists. Use the link the merchant gave you.');
  if (err.status === 410) return messageScreen('expired', 'warn', 'This checkout has expired', 'Start no new payment on this page.');
  if (err.status === 429) return messageScreen('rate-limited', 'error', 'Too many requests', `Please wait ${err.retryAfter ?? 5} seconds, then try again.`, { label: 'Try again', onclick: retry });
  return messageScreen('unreachable', 'error', 'Checkout unavailable', 'Tollgate could not load this checkout right now. Try again in a moment.', { label: 'Try again', onclick: retry });
}
