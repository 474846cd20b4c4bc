import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../../http/route.ts';
import { AppError } from '../../../http/errors.ts';
import { OrderIdParams } from '../../../orders/routes/getOrder.ts';
import { OrderStatusRecordSchema, orderStatusRecord } from '../../../orders/views.ts';
import { cardsOf } from '../index.ts';
import { getCardPayment, lockOrder } from '../repo.ts';
import { SIMULATED_SCENARIOS, TestCardProcessor } from '../test/processor.ts';

/**
 * Operator, TEST processor only: makes the simulated processor report an event for a card order
 * (`tollgate card simulate <order_id> <scenario>`): complete a delayed payment (`succeeded`),
 * decline it, charge it again (`duplicate`), refund it in full, or open / win / lose a dispute.
 */
export const adminSimulateCardEvent = defineRoute({
  method: 'POST',
  url: '/admin/v1/orders/:order_id/card/simulate',
  auth: 'admin',
  summary: 'TEST processor: simulate a card processor event for a card order',
  tags: ['admin'],
  params: OrderIdParams,
  body: Type.Object(
    {
      scenario: Type.Union(
        SIMULATED_SCENARIOS.map((s) => Type.Literal(s)),
        { description: SIMULATED_SCENARIOS.join(', ') },
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ outcome: Type.String(), order: OrderStatusRecordSchema }) },
  errors: [503],
  async handler(req, _reply, deps) {
    const cards = cardsOf(deps);
    const p = cards.processor;
    if (!(p instanceof TestCardProcessor)) throw new AppError('card_processor_unavailable', 'the TEST card processor is not enabled in this deployment');
    const order = await lockOrder(deps.db, req.params.order_id);
    const cp = order && (await getCardPayment(deps.db, order.id));
    if (!order || !cp || cp.processor !== p.name || !cp.payment_reference) throw new AppError('order_not_found', 'no TEST card order with a started payment has this id', 'order_id');
    let outcome: string;
    if (req.body.scenario === 'refund') {
      const out = await cards.refund({ orderId: order.id, by: 'operator', reason: 'simulated refund' });
      if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
      outcome = 'refunded';
    } else {
      const events = p.simulate(req.body.scenario, { orderId: order.id, paymentReference: cp.payment_reference, amountMinor: BigInt(order.amount_wei), currency: order.fiat_currency! }, Math.floor(deps.clock.now() / 1000));
      outcome = (await cards.applyBatch(p.name, events)).outcome;
    }
    return { outcome, order: orderStatusRecord((await lockOrder(deps.db, order.id))!) };
  },
});
