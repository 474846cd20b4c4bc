// Machine payments (mpp) and x402 settlements of the session's merchant, with their receipts: the
// same reads and views as the merchant API (/api/v1/mpp/payments, /api/v1/x402/settlements).
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { timePage, timePageQuery } from '../../http/time-page.ts';
import { paymentView } from '../../mpp/events.ts';
import { ReceiptSchema } from '../../mpp/routes/views.ts';
import { listSettlements } from '../../x402/records.ts';
import { X402SettlementSchema } from '../../x402/routes/merchant_listSettlements.ts';
import { merchantOf } from '../http.ts';
import { explorerTxUrl } from '../data/service.ts';

export const portalListMppPayments = defineRoute({
  method: 'GET',
  url: '/portal/api/mpp/payments',
  auth: 'portal',
  summary: "The merchant's paid machine payments with their signed receipts (compact JWS), newest first; page with `before` = the last paid_at",
  tags: ['portal'],
  querystring: timePageQuery('paid_at'),
  response: { 200: Type.Object({ data: Type.Array(Type.Intersect([ReceiptSchema, Type.Object({ paid_at: Type.String(), explorer_url: Type.Optional(Type.String()) })])) }) },
  async handler(req, _reply, deps) {
    const { limit, before } = timePage(req.query);
    const rows = await deps.mpp.payments(merchantOf(req.portal), limit, before);
    return {
      data: rows.map((r) => {
        const v = paymentView(r);
        const url = explorerTxUrl(deps, v.chain_id, v.tx_hash);
        return { ...v, ...(url ? { explorer_url: url } : {}) };
      }),
    };
  },
});

export const portalListX402Settlements = defineRoute({
  method: 'GET',
  url: '/portal/api/x402/settlements',
  auth: 'portal',
  summary: "x402 settlements this gateway performed to the merchant's wallets, newest first; the receipt is the settlement transaction (explorer link when the chain has one)",
  tags: ['portal'],
  querystring: timePageQuery('created_at'),
  response: { 200: Type.Object({ data: Type.Array(Type.Intersect([X402SettlementSchema, Type.Object({ explorer_url: Type.Optional(Type.String()) })])) }) },
  async handler(req, _reply, deps) {
    const { limit, before } = timePage(req.query);
    const rows = await listSettlements(deps.db, deps.config, merchantOf(req.portal), limit, before);
    return {
      data: rows.map((r) => {
        const url = explorerTxUrl(deps, r.chain_id, r.tx_hash);
        return { ...r, ...(url ? { explorer_url: url } : {}) };
      }),
    };
  },
});
