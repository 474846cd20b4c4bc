import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MerchantIdParams } from './views.ts';

/**
 * Turns the merchant's card rail on or off. Checkout sessions may offer `fiat` only while it is on;
 * sessions already created keep their terms. `GET /merchants/{id}` lists `fiat` in
 * `payment_methods` while it is on.
 */
export const adminSetCardRail = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/card-rail',
  auth: 'admin',
  summary: 'Enable or disable the card (fiat) rail of a merchant',
  tags: ['admin'],
  params: MerchantIdParams,
  body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }),
  response: { 200: Type.Object({ merchant_id: Type.String(), card_enabled: Type.Boolean() }) },
  async handler(req, _reply, deps) {
    const m = await deps.merchants.setCardEnabled(req.params.merchant_id, req.body.enabled);
    if (!m) throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    return { merchant_id: m.id, card_enabled: m.card_enabled };
  },
});
