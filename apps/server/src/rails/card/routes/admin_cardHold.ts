import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../../http/route.ts';
import { AppError } from '../../../http/errors.ts';
import { OrderIdParams } from '../../../orders/routes/getOrder.ts';
import { OrderStatusRecordSchema, orderStatusRecord } from '../../../orders/views.ts';
import { cardsOf } from '../index.ts';
import type { HoldOutcome } from '../service.ts';
import { HOLD_REASONS } from '../states.ts';

const HoldBody = Type.Object(
  {
    reason: Type.Union(
      HOLD_REASONS.map((r) => Type.Literal(r)),
      { description: HOLD_REASONS.join(', ') },
    ),
  },
  { additionalProperties: false },
);

function answer(out: HoldOutcome) {
  if (out.kind === 'not_found') throw new AppError('order_not_found', 'card order not found', 'order_id');
  if (out.kind === 'refused') throw new AppError(out.code, out.message, out.param);
  return orderStatusRecord(out.order);
}

/**
 * Operator: release one hold reason of a card order (after the duplicate charge was refunded, the
 * conflict reviewed, the balance topped up…). With no reason left and a succeeded payment, the
 * order is INVOICED and the completion events go out.
 */
export const adminReleaseCardHold = defineRoute({
  method: 'POST',
  url: '/admin/v1/orders/:order_id/card/release',
  auth: 'admin',
  summary: 'Release a hold reason of a card order',
  tags: ['admin'],
  params: OrderIdParams,
  body: HoldBody,
  response: { 200: OrderStatusRecordSchema },
  errors: [409],
  async handler(req, _reply, deps) {
    return answer(await cardsOf(deps).release(req.params.order_id, req.body.reason));
  },
});

/** Operator: hold a card order that is not invoiced yet (e.g. `balance` while a balance question is open). */
export const adminHoldCardOrder = defineRoute({
  method: 'POST',
  url: '/admin/v1/orders/:order_id/card/hold',
  auth: 'admin',
  summary: 'Hold a card order for a reason',
  tags: ['admin'],
  params: OrderIdParams,
  body: HoldBody,
  response: { 200: OrderStatusRecordSchema },
  async handler(req, _reply, deps) {
    return answer(await cardsOf(deps).hold(req.params.order_id, req.body.reason));
  },
});
