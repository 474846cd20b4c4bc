import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MerchantIdParams } from './views.ts';

/** Highest tolerance an operator may set: 10 % short still counts as paid. */
const MAX_UNDERPAY_TOLERANCE_BPS = 1000;

/**
 * Sets how far short of an order's amount a transfer may be and still pay it, in basis points of
 * the amount (docs/attribution.md). 0 (the default) means exact or more. Applies to transfers the
 * watcher attributes from now on; recorded under-payments stay recorded (accept them explicitly).
 */
export const adminSetUnderpayTolerance = defineRoute({
  method: 'PUT',
  url: '/admin/v1/merchants/:merchant_id/underpayment-tolerance',
  auth: 'admin',
  summary: 'Set the under-payment tolerance (basis points of the order amount, 0–1000)',
  tags: ['admin'],
  params: MerchantIdParams,
  body: Type.Object({ underpay_tolerance_bps: Type.Integer({ minimum: 0, maximum: MAX_UNDERPAY_TOLERANCE_BPS, description: '50 = a payment 0.5 % short counts as paid' }) }, { additionalProperties: false }),
  response: { 200: Type.Object({ merchant_id: Type.String(), underpay_tolerance_bps: Type.Integer() }) },
  async handler(req, _reply, deps) {
    const m = await deps.merchants.setUnderpayTolerance(req.params.merchant_id, req.body.underpay_tolerance_bps);
    if (!m) throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    return { merchant_id: m.id, underpay_tolerance_bps: m.underpay_tolerance_bps };
  },
});
