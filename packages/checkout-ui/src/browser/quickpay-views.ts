// The screens of the quick-pay link page that checkout has no equivalent of: the link itself
// (product, price or amount entry, memo, the rails in the merchant's order: token and network and
// the two ways to pay, the card) and the share block (the link's URL and its QR code). Payment, completion and messages reuse views.ts.
import { logoSrc } from '../lib/api.ts';
import { networkName } from '../lib/chains.ts';
import { formatUnits } from '../lib/money.ts';
import type { PublicLink, QuickPayOption } from '../lib/quickpay.ts';
import type { PublicSession } from '../lib/types.ts';
import { cardMethod } from './card-method.ts';
import { optionKey } from '../lib/terms.ts';
import { copyButton } from './copy.ts';
import { h } from './dom.ts';
import { addressPlaceholder } from './views.ts';
import { qrSvg } from './qr.ts';

/** The price line: the selected token's price, the range of an any-amount link, or the card price. */
export const linkPrice = (l: PublicLink, o: QuickPayOption | undefined) => (o ? (priceOf(o) ?? `Any amount from ${l.min_amount} to ${l.max_amount} ${o.token_symbol}`) : `${l.fiat_amount ?? ''} ${l.fiat_currency ?? ''}`.trim());

/** "12.50 USDC" for a fixed price; undefined for an any-amount link. */
const priceOf = (o: QuickPayOption) => (o.amount_wei ? `${formatUnits(o.amount_wei, o.decimals)} ${o.token_symbol}` : undefined);

export interface LinkHandlers {
  onSelect(o: QuickPayOption): void;
  onQr(address: string): void;
  /** "Pay by card" (links offering `card`) */
  onCard(): void;
  /** the live region: "Link copied." */
  notify(text: string): void;
}

function field(id: string, label: string, help: string, attrs: Record<string, string | boolean>) {
  const input = h('input', { id, name: id, type: 'text', autocomplete: 'off', 'aria-describedby': `${id}-help ${id}-err`, ...attrs });
  const err = h('p', { id: `${id}-err`, class: 'error', hidden: true });
  return { input, err, nodes: [h('label', { for: id }, label), input, h('p', { id: `${id}-help`, class: 'muted small' }, help), err] };
}

/** The link screen: what is sold, how much, which rail, token and network, and how to pay. */
export function linkScreen(l: PublicLink, selected: QuickPayOption | undefined, pageOrigin: string, on: LinkHandlers) {
  const img = l.product?.image_url ? logoSrc(l.product.image_url, pageOrigin) : undefined;
  const image = img ? h('img', { class: 'product-image', src: img, alt: '', referrerpolicy: 'no-referrer', decoding: 'async' }) : undefined;
  image?.addEventListener('error', () => image.remove());
  const amount = l.kind === 'any_amount' ? field('amount', `Amount (${selected?.token_symbol ?? ''})`, `Between ${l.min_amount} and ${l.max_amount}.`, { inputmode: 'decimal', placeholder: '0.00', required: true }) : undefined;
  const memo = field('memo', 'Reference (optional)', 'An invoice number or a note for the merchant. Shared with the merchant only.', { maxlength: '200' });
  const payer = field('payer', 'Your paying address', 'The wallet you will pay from. Tollgate recognises your payment by it; the address to pay and the QR code come next.', {
    autocapitalize: 'off',
    spellcheck: 'false',
    placeholder: selected ? addressPlaceholder(selected) : '0x…',
    required: true,
  });
  const wallets = h('div', { class: 'wallets' }, h('p', { class: 'muted' }, 'Looking for a browser wallet…'));
  const form = h('form', { class: 'qr-form', novalidate: true }, payer.nodes, h('button', { type: 'submit', class: 'secondary' }, 'Show payment QR code'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    on.onQr(payer.input.value);
  });
  const heading = h('h2', { id: 'link-h', tabindex: -1 }, l.product ? l.product.name : `Pay ${l.merchant.name}`);
  const price = h('p', { class: 'price', id: 'price' }, linkPrice(l, selected));
  // Crypto: token and network, then the two ways to pay. Card: checkout's "Pay by card" block
  // (cardMethod reads only the card price, fiat_amount and fiat_currency, which the link carries).
  const crypto = selected
    ? h(
        'div',
        { class: 'rail', 'data-rail': 'crypto' },
        h(
          'fieldset',
          { class: 'options' },
          h('legend', {}, 'Token and network'),
          l.payment_options.map((o) =>
            h(
              'label',
              { class: 'option' },
              h('input', { type: 'radio', name: 'option', value: optionKey(o), checked: optionKey(o) === optionKey(selected), onchange: () => on.onSelect(o) }),
              h('span', { class: 'option-text' }, h('strong', {}, o.token_symbol), ` on ${networkName(o)}`),
              priceOf(o) ? h('span', { class: 'option-amount' }, priceOf(o)) : undefined,
            ),
          ),
        ),
        h('div', { class: 'method' }, h('h3', {}, 'Pay with a browser wallet'), wallets),
        h('div', { class: 'method' }, h('h3', {}, 'Pay from another wallet (QR code)'), form),
      )
    : undefined;
  const card = l.payment_rails.includes('card') && l.fiat_amount !== undefined ? cardMethod(l as unknown as PublicSession, on.onCard) : undefined;
  const node = h(
    'section',
    { 'aria-labelledby': 'link-h', 'data-screen': 'link' },
    h('div', { class: 'product' }, image, h('div', {}, heading, l.product?.description ? h('p', { class: 'muted' }, l.product.description) : undefined, price)),
    amount?.nodes,
    memo.nodes,
    // The rails in the order the merchant listed them (the link's payment_rails).
    l.payment_rails.map((r) => (r === 'card' ? card : r === 'crypto' ? crypto : undefined)),
    // Sharing is offered here only: a payment screen shows one QR code, the one to pay with.
    shareBlock(l, on.notify),
  );
  return { node, heading, price, wallets, amount, memo, payer };
}

/** The shareable URL of the link with a copy button and the QR code of the link itself. */
function shareBlock(l: PublicLink, notify: (text: string) => void) {
  return h(
    'details',
    { class: 'share' },
    h('summary', {}, 'Share this payment link'),
    h('p', { class: 'copyable' }, h('code', { class: 'addr', id: 'share-url' }, l.url), copyButton(l.url, 'link', notify)),
    h('figure', { class: 'qr-block' }, qrSvg(l.url, `QR code of this payment link: ${l.url}`), h('figcaption', {}, 'Scan to open this page on another device')),
  );
}
