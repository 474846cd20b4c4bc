// The completion screen with the payer's receipt: what was paid, to whom, how, the order reference
// and the transaction with its explorer link; printable (the stylesheet's print rules keep only the
// receipt) and downloadable as a text file. Loaded lazily by the checkout page (chunk.ts: only a
// payer who finished needs it, and the first download stays inside its budget); the quick-pay page
// imports it directly. Nothing here is a proof of payment: the merchant verifies with Tollgate.
import { explorerTxUrl } from '../lib/chains.ts';
import { h } from './dom.ts';

export interface Receipt {
  merchant: string;
  /** what was bought: the product, or the line items */
  item?: string | undefined;
  /** "12.50 USDC" or "9.50 EUR" */
  amount?: string | undefined;
  /** "USDC on Base Sepolia" or "Card" */
  method?: string | undefined;
  /** the order id the merchant finds the payment by */
  reference?: string | undefined;
  /** the payer's own reference (quick-pay memo) */
  payerReference?: string | undefined;
  txHash?: string | undefined;
  explorerUrl?: string | undefined;
  card?: boolean | undefined;
  /** success_url with the checkout id: the page goes there by itself */
  redirect?: string | undefined;
  /** when the page saw the payment complete (ms) */
  at: number;
}

/** The receipt's rows as label/value pairs (the screen's list and the downloaded text). */
export function receiptRows(r: Receipt): [string, string][] {
  const rows: [string, string | undefined][] = [
    ['Paid to', r.merchant],
    ['For', r.item],
    ['Amount', r.amount],
    ['Paid with', r.method],
    ['Order reference', r.reference],
    ['Your reference', r.payerReference],
    ['Date', new Date(r.at).toLocaleString()],
    ['Transaction', r.txHash],
  ];
  return rows.filter((x): x is [string, string] => !!x[1]);
}

/** The downloadable receipt: plain text, readable anywhere, nothing that could run. */
export function receiptText(r: Receipt): string {
  const href = explorerTxUrl(r.explorerUrl, r.txHash);
  const width = Math.max(...receiptRows(r).map(([k]) => k.length));
  return [`Payment receipt`, '', ...receiptRows(r).map(([k, v]) => `${k.padEnd(width)}  ${v}`), ...(href ? [`${'Explorer'.padEnd(width)}  ${href}`] : []), '', 'This receipt is not a proof of payment: the merchant confirms the payment with Tollgate.', ''].join(
    '\n',
  );
}

/** COMPLETED: the confirmation, the receipt, print and download, and the way back to the merchant. */
export function doneScreen(r: Receipt) {
  const href = explorerTxUrl(r.explorerUrl, r.txHash);
  const link = href ? h('a', { id: 'explorer-done', class: 'explorer', href, target: '_blank', rel: 'noopener noreferrer' }, `View the transaction on ${new URL(href).host}`) : undefined;
  const file = URL.createObjectURL(new Blob([receiptText(r)], { type: 'text/plain;charset=utf-8' }));
  const name = `receipt-${(r.reference ?? 'payment').replace(/[^A-Za-z0-9_-]/g, '')}.txt`;
  return h(
    'section',
    { 'aria-labelledby': 'done-h', class: 'result tone-ok', 'data-screen': 'completed' },
    h('h2', { id: 'done-h', tabindex: -1 }, 'Payment complete'),
    h('p', {}, r.card ? 'Tollgate has confirmed your card payment.' : 'Tollgate has confirmed this payment on-chain.'),
    h(
      'section',
      { class: 'receipt', 'aria-labelledby': 'receipt-h' },
      h('h3', { id: 'receipt-h' }, 'Receipt'),
      h(
        'dl',
        { class: 'terms' },
        receiptRows(r).map(([k, v]) => [h('dt', {}, k), h('dd', {}, k === 'Transaction' || k === 'Order reference' ? h('code', { class: 'addr' }, v) : v, k === 'Transaction' ? link : undefined)]),
      ),
    ),
    h(
      'div',
      { class: 'receipt-actions' },
      h('button', { type: 'button', class: 'secondary', id: 'print-receipt', onclick: () => window.print() }, 'Print receipt'),
      h('a', { class: 'button secondary', id: 'download-receipt', href: file, download: name }, 'Download receipt'),
    ),
    r.redirect ? [h('p', {}, `Taking you back to ${r.merchant}…`), h('a', { class: 'button primary', href: r.redirect, rel: 'noreferrer' }, `Return to ${r.merchant}`)] : undefined,
    h('p', { class: 'note' }, `This page is not a proof of payment. ${r.merchant} confirms your payment with Tollgate before delivering your order.`),
  );
}

(window as unknown as Record<string, unknown>).tollgate_receipt = { doneScreen };
