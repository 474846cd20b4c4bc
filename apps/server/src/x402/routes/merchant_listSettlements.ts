import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { timePage, timePageQuery } from '../../http/time-page.ts';
import { listSettlements } from '../records.ts';

export const X402SettlementSchema = Type.Object({
  settlement_id: Type.String(),
  network: Type.String(),
  chain_id: Type.Integer(),
  token_contract: Type.String(),
  token_symbol: Type.Union([Type.String(), Type.Null()]),
  payer: Type.String(),
  pay_to: Type.String(),
  amount_wei: Type.String(),
  tx_hash: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('confirmed'), Type.Literal('failed')]),
  block_number: Type.Union([Type.Integer(), Type.Null()]),
  created_at: Type.String(),
});

/** x402 settlements the facilitator performed to the merchant's wallets (x402/records.ts), newest first. */
export const merchantListX402Settlements = defineRoute({
  method: 'GET',
  url: '/api/v1/x402/settlements',
  auth: 'merchant',
  summary: 'x402 settlements this gateway performed to the merchant’s wallets, newest first',
  tags: ['x402'],
  querystring: timePageQuery('created_at'),
  response: { 200: Type.Object({ data: Type.Array(X402SettlementSchema) }) },
  async handler(req, _reply, deps) {
    const { limit, before } = timePage(req.query);
    return { data: await listSettlements(deps.db, deps.config, req.merchant.merchantId, limit, before) };
  },
});
