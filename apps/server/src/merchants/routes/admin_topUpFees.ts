import { Type } from '@sinclair/typebox';
import { parseDecimal } from '@tollgate/protocol';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { DecimalString } from '../../http/schemas.ts';
import { FEE_DECIMALS } from '../../config/load.ts';
import { feeBalanceView } from '../service.ts';
import { FeeBalanceSchema, MerchantIdParams } from './views.ts';

export const adminTopUpFees = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/fee-balance/top-ups',
  auth: 'admin',
  summary: 'Credit the merchant fee balance (decimal string, up to 6 fraction digits)',
  tags: ['admin'],
  params: MerchantIdParams,
  body: Type.Object({ amount: DecimalString }, { additionalProperties: false }),
  response: { 200: FeeBalanceSchema },
  async handler(req, _reply, deps) {
    let micros: bigint;
    try {
      micros = parseDecimal(req.body.amount, FEE_DECIMALS);
    } catch (err) {
      throw new AppError('invalid_amount', (err as Error).message, 'amount');
    }
    if (micros <= 0n) throw new AppError('invalid_amount', 'amount must be positive', 'amount');
    const balance = await deps.merchants.topUp(req.params.merchant_id, micros);
    if (!balance) throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    return feeBalanceView(balance);
  },
});
