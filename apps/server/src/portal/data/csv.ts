// CSV of the accounting exports (RFC 4180): pure formatting, no I/O.
import { formatUnits } from '@tollgate/protocol';
import { FEE_DECIMALS } from '../../config/load.ts';
import type { ExportRow } from './repo.ts';

/**
 * One CSV cell. Quoted when it holds a comma, quote or line break; a cell a spreadsheet would run as
 * a formula (leading = + - @, tab or CR: a merchant-chosen dapp_order_id or line item name) gets a
 * leading apostrophe (OWASP "CSV injection"). A spreadsheet set to another separator (`;` in much of
 * Europe) splits the line there and ignores our quotes, because the quote is then mid-field: so a
 * formula character after any `,` `;` tab or line break inside a cell gets the apostrophe too.
 *
 * @example csvCell('a,b') // => '"a,b"'
 * @example csvCell('=HYPERLINK(1)') // => "'=HYPERLINK(1)"
 * @example csvCell('Mug;=HYPERLINK(1)') // => "Mug;'=HYPERLINK(1)"
 */
export function csvCell(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  let s = String(v);
  if (typeof v === 'string') {
    if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
    s = s.replace(/([,;\t\r\n][ \t]*)(?=[=+\-@])/g, "$1'");
  }
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (cells: (string | number | null | undefined)[]) => cells.map(csvCell).join(',') + '\r\n';

/**
 * The one column set of both exports (orders.csv, payments.csv), documented in docs/portal.md
 * "Exports". A row is an order (`row_type` order), a payment (payment) or a refund (refund: its own
 * row; its amounts are what was refunded, positive: a leading minus would be neutralised as a
 * formula character by csvCell; `created_at`/`event_at`/`status` are the refund's).
 */
export const EXPORT_COLUMNS = [
  'row_type',
  'order_id',
  'refund_id',
  'dapp_order_id',
  'created_at',
  'event_at',
  'status',
  'rail',
  'flow',
  'chain_id',
  'currency',
  'token',
  'decimals',
  'amount',
  'amount_wei',
  'paid_amount',
  'fiat_amount',
  'refunded_amount',
  'fee',
  'payer',
  'pay_to',
  'tx_hash',
  'log_index',
  'block_number',
  'processor',
  'processor_reference',
  'confirmed_at',
  'invoiced_at',
  'checkout_id',
  'client_reference_id',
  'quickpay_session_id',
  'payer_reference',
  'line_items',
] as const;

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : '');

/** Line items as `name x quantity @ amount; …` (amounts as the session stored them, decimal strings; items without one have no `@`). */
function lineItems(v: unknown): string {
  if (!Array.isArray(v) || v.length === 0) return '';
  return v.map((i: { name?: unknown; quantity?: unknown; amount?: unknown }) => `${String(i.name ?? '')} x ${String(i.quantity ?? 1)}${i.amount === undefined ? '' : ` @ ${String(i.amount)}`}`).join('; ');
}

/** card, delegate or direct, from the order's flow (the rails of docs/refunds.md). */
function railOf(flow: string): 'card' | 'delegate' | 'direct' {
  if (flow.startsWith('FIAT_')) return 'card';
  return flow === 'ERC20_DIRECT' || flow === 'SOL_DIRECT' ? 'direct' : 'delegate';
}

/**
 * One export row. Amounts are decimal strings in `currency` with `decimals` (a card order's
 * currency is its fiat currency, minor units; a crypto order's its token) and in base units
 * (`amount_wei`); the fee in fee units (6 decimals). A card order has no chain, payer wallet or
 * pay-to address: those cells stay empty rather than show placeholders.
 */
export function orderCsvLine(r: ExportRow, rowType: 'order' | 'payment' | 'refund' = 'order'): string {
  const card = railOf(r.flow) === 'card';
  const units = (v: string | null | undefined) => (v === null || v === undefined ? '' : formatUnits(BigInt(v), r.decimals, card ? r.decimals : 0));
  const rf = rowType === 'refund' ? r.refund : undefined;
  const eventAt = rf ? rf.completed_at : (r.invoiced_at ?? r.confirmed_at ?? r.payment_seen_at);
  return csvLine([
    rowType,
    r.id,
    rf?.id,
    r.dapp_order_id,
    iso(rf ? rf.created_at : r.created_at),
    iso(eventAt),
    rf ? rf.status : r.status,
    rf ? rf.rail : railOf(r.flow),
    r.flow,
    card ? null : r.chain_id,
    r.fiat_currency ?? r.token_symbol,
    card ? null : r.token_symbol,
    r.decimals,
    rf ? units(rf.amount) : units(r.amount_wei),
    rf ? rf.amount : r.amount_wei,
    rf ? null : units(r.paid_amount_wei ?? (card && r.payment_seen_at ? r.amount_wei : null)),
    r.fiat_amount,
    r.refunded_amount && r.refunded_amount !== '0' ? units(r.refunded_amount) : null,
    rf ? null : formatUnits(BigInt(r.fee_amount), FEE_DECIMALS),
    card ? null : r.from_address,
    card ? null : r.pay_to_address,
    rf ? rf.tx_hash : r.tx_hash,
    rf ? null : r.log_index,
    rf || r.block_number === null ? null : Number(r.block_number),
    r.processor,
    rf ? rf.processor_refund_id : r.payment_reference,
    iso(r.confirmed_at),
    iso(r.invoiced_at),
    r.checkout_id,
    r.client_reference_id,
    r.quickpay_session_id,
    r.payer_reference,
    lineItems(r.line_items),
  ]);
}
