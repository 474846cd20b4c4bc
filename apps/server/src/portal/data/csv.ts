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

export const ORDER_COLUMNS = [
  'order_id', 'dapp_order_id', 'created_at', 'status', 'flow', 'chain_id', 'token', 'decimals', 'amount', 'amount_wei',
  'paid_amount', 'fee', 'payer', 'pay_to', 'tx_hash', 'log_index', 'block_number', 'confirmed_at', 'invoiced_at',
  'checkout_id', 'client_reference_id', 'line_items',
] as const;

const iso = (d: Date | null) => (d ? d.toISOString() : '');

/** Line items as `name x quantity @ amount; …` (amounts as the session stored them, decimal strings; items without one have no `@`). */
function lineItems(v: unknown): string {
  if (!Array.isArray(v) || v.length === 0) return '';
  return v
    .map((i: { name?: unknown; quantity?: unknown; amount?: unknown }) => `${String(i.name ?? '')} x ${String(i.quantity ?? 1)}${i.amount === undefined ? '' : ` @ ${String(i.amount)}`}`)
    .join('; ');
}

/** One export row; amounts in token units with the token's decimals, the fee in fee units (6 decimals). */
export function orderCsvLine(r: ExportRow): string {
  return csvLine([
    r.id, r.dapp_order_id, iso(r.created_at), r.status, r.flow, r.chain_id, r.token_symbol, r.decimals,
    formatUnits(BigInt(r.amount_wei), r.decimals), r.amount_wei,
    r.paid_amount_wei === null ? '' : formatUnits(BigInt(r.paid_amount_wei), r.decimals),
    formatUnits(BigInt(r.fee_amount), FEE_DECIMALS), r.from_address, r.pay_to_address, r.tx_hash, r.log_index,
    r.block_number === null ? null : Number(r.block_number), iso(r.confirmed_at), iso(r.invoiced_at), r.checkout_id,
    r.client_reference_id, lineItems(r.line_items),
  ]);
}
