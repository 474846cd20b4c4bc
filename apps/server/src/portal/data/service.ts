// The portal's read side: order pages with opaque keyset cursors, the overview, an order's detail
// (audit trail, transfers, proof, deliveries, explorer link), the fee ledger, the CSV exports.
import { Readable } from 'node:stream';
import type { PortalDeps } from '../context.ts';
import { getOrderWithTransfers } from '../../orders/transfers-repo.ts';
import { orderStatusRecord } from '../../orders/views.ts';
import { paymentRecord } from '../../orders/proof.ts';
import { webhookService } from '../../webhooks/service.ts';
import { getCardPayment } from '../../rails/card/repo.ts';
import type { CardOrderColumns } from '../../rails/card/columns.ts';
import type { DelegateOrderColumns } from '../../settlement/columns.ts';
import { EXPORT_COLUMNS, csvLine, orderCsvLine } from './csv.ts';
import * as repo from './repo.ts';

/** Rows per export query: ~1 MB of CSV at most in memory, one round trip per 1000 rows. */
const EXPORT_PAGE = 1000;

/** Cursor = base64url("<created_us>.<order id>"): opaque to the page, exact to the microsecond. */
export function encodeCursor(r: { created_us: string; id: string }): string {
  return Buffer.from(`${r.created_us}.${r.id}`, 'utf8').toString('base64url');
}

/** Microseconds of 10000-01-01: no order time is later, and PostgreSQL computes with it safely. */
const MAX_CURSOR_US = 253_402_300_800_000_000n;

export function decodeCursor(c: string): { createdUs: string; id: string } | undefined {
  const s = Buffer.from(c, 'base64url').toString('utf8');
  const m = /^(-?[0-9]{1,19})\.([A-Za-z0-9_]{1,64})$/.exec(s);
  if (!m) return undefined;
  // A 19-digit time overflows bigint (or the timestamp range) in SQL: a 500 before this bound.
  const us = BigInt(m[1]!);
  if (us < -MAX_CURSOR_US || us > MAX_CURSOR_US) return undefined;
  return { createdUs: us.toString(), id: m[2]! };
}

export async function listOrders(deps: PortalDeps, merchantId: string, f: repo.OrderListFilter): Promise<{ orders: repo.OrderListRow[]; next: string | null }> {
  const rows = await repo.listOrders(deps.db, merchantId, { ...f, limit: f.limit + 1 });
  const more = rows.length > f.limit;
  const page = more ? rows.slice(0, f.limit) : rows;
  return { orders: page, next: more ? encodeCursor(page.at(-1)!) : null };
}

export function overview(deps: PortalDeps, merchantId: string, days: number) {
  const from = new Date(deps.clock.now() - days * 86_400_000);
  from.setUTCHours(0, 0, 0, 0);
  return repo.overview(deps.db, merchantId, from);
}

/** Explorer link of a transaction, when the chain has an explorer configured. */
export function explorerTxUrl(deps: PortalDeps, chainId: number, txHash: string | null): string | undefined {
  const base = deps.config.chains.find((c) => c.chainId === chainId)?.explorerUrl;
  return base && txHash ? `${base}/tx/${txHash}` : undefined;
}

/** Everything the order page shows, or undefined when the order is not this merchant's. */
export async function orderDetail(deps: PortalDeps, merchantId: string, orderId: string) {
  const found = await getOrderWithTransfers(deps.db, merchantId, orderId);
  if (!found) return undefined;
  // `SELECT *`: the rails' columns come with the row.
  const o = found as typeof found & CardOrderColumns & DelegateOrderColumns;
  const [timeline, deliveries] = await Promise.all([repo.listTransitions(deps.db, o.id), webhookService(deps).listDeliveries(merchantId, { orderId: o.id, limit: 50 })]);
  const proof = paymentRecord(o);
  // A card order has no chain: its processor-side record instead (brand, last four, decline).
  const card = o.fiat_currency ? await getCardPayment(deps.db, o.id) : undefined;
  return {
    order: orderStatusRecord(o, o.observed),
    decimals: o.decimals,
    fee_amount: o.fee_amount,
    timeline,
    deliveries: deliveries ?? [],
    proof,
    card,
    explorerUrl: explorerTxUrl(deps, o.chain_id, o.tx_hash),
    settlementExplorerUrl: explorerTxUrl(deps, o.chain_id, o.settlement_tx_hash),
    refundExplorerUrl: explorerTxUrl(deps, o.chain_id, o.refund_tx_hash),
  };
}

export function ledger(deps: PortalDeps, merchantId: string, before: number | undefined, limit: number) {
  return repo.listLedger(deps.db, merchantId, before, limit);
}

/**
 * The orders (or payments: every paid order of every rail, then the refunds made in the range as
 * their own rows) of [from, to) as CSV in the one column set (csv.ts EXPORT_COLUMNS), pulled one
 * page of EXPORT_PAGE rows at a time as the client reads: a stream, so a slow client holds one
 * page, and a year of orders never sits in memory.
 */
export async function exportCsv(deps: PortalDeps, merchantId: string, a: { from: Date; to: Date; paidOnly: boolean }): Promise<Readable> {
  // The first page is read before the answer starts: a database failure is then a 500, not a
  // 200 with a truncated file.
  let pending: repo.ExportRow[] | undefined = await repo.exportPage(deps.db, merchantId, { ...a, limit: EXPORT_PAGE });
  let after: { createdUs: string; id: string } | undefined;
  let phase: 'header' | 'orders' | 'refunds' = 'header';
  const rowType = a.paidOnly ? 'payment' : 'order';
  return new Readable({
    async read() {
      try {
        if (phase === 'header') {
          phase = 'orders';
          this.push(csvLine([...EXPORT_COLUMNS]));
          return;
        }
        if (phase === 'orders') {
          const rows = pending ?? (await repo.exportPage(deps.db, merchantId, { ...a, after, limit: EXPORT_PAGE }));
          pending = undefined;
          if (rows.length === EXPORT_PAGE || (rows.length > 0 && !a.paidOnly)) {
            after = { createdUs: rows.at(-1)!.created_us, id: rows.at(-1)!.id };
            this.push(rows.map((r) => orderCsvLine(r, rowType)).join(''));
            if (rows.length < EXPORT_PAGE) this.push(null);
            return;
          }
          if (!a.paidOnly) return void this.push(null);
          // The last page of payments: the refunds follow in this same read (a read must push).
          phase = 'refunds';
          after = undefined;
          const lines = rows.map((r) => orderCsvLine(r, rowType)).join('');
          const refunds = await repo.exportRefundPage(deps.db, merchantId, { from: a.from, to: a.to, limit: EXPORT_PAGE });
          if (refunds.length > 0) after = { createdUs: refunds.at(-1)!.refund_created_us, id: refunds.at(-1)!.refund!.id };
          const more = lines + refunds.map((r) => orderCsvLine(r, 'refund')).join('');
          if (more) this.push(more);
          if (refunds.length < EXPORT_PAGE) this.push(null);
          return;
        }
        const refunds = await repo.exportRefundPage(deps.db, merchantId, { from: a.from, to: a.to, after, limit: EXPORT_PAGE });
        if (refunds.length > 0) {
          after = { createdUs: refunds.at(-1)!.refund_created_us, id: refunds.at(-1)!.refund!.id };
          this.push(refunds.map((r) => orderCsvLine(r, 'refund')).join(''));
        }
        if (refunds.length < EXPORT_PAGE) this.push(null);
      } catch (err) {
        this.destroy(err as Error);
      }
    },
  });
}
