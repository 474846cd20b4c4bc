import { Type } from '@sinclair/typebox';
import { formatUnits } from '@tollgate/protocol';
import { defineRoute } from '../../http/route.ts';
import { FEE_DECIMALS } from '../../config/load.ts';
import { AppError } from '../../http/errors.ts';
import { OrderStatusRecordSchema } from '../../orders/views.ts';
import { DeliverySchema, deliveryView } from '../../webhooks/routes/views.ts';
import { merchantOf } from '../http.ts';
import { orderDetail } from '../data/service.ts';
import { railOf } from './views.ts';

export const portalGetOrder = defineRoute({
  method: 'GET',
  url: '/portal/api/orders/:order_id',
  auth: 'portal',
  summary: "An order of the session's merchant: status record, rail (card orders: the processor's payment, brand and last four), state timeline (audit trail), transfers seen, proof, explorer link, webhook deliveries; 404 for another merchant's order",
  tags: ['portal'],
  params: Type.Object({ order_id: Type.String({ minLength: 1, maxLength: 64 }) }),
  response: {
    200: Type.Object({
      order: OrderStatusRecordSchema,
      decimals: Type.Integer(),
      amount: Type.String({ description: 'amount_wei in token units' }),
      fee: Type.String({ description: 'the order fee (fee units, 2+ decimals)' }),
      timeline: Type.Array(Type.Object({ from_status: Type.Optional(Type.String()), to_status: Type.String(), trigger: Type.String(), at: Type.String() })),
      proof: Type.Optional(Type.Object({ payload: Type.Record(Type.String(), Type.Union([Type.String(), Type.Integer()])), signature: Type.String() })),
      explorer_url: Type.Optional(Type.String()),
      settlement_explorer_url: Type.Optional(Type.String({ description: 'DELEGATE: explorer link of settlement_tx_hash' })),
      refund_explorer_url: Type.Optional(Type.String({ description: 'DELEGATE: explorer link of refund_tx_hash' })),
      rail: Type.Union([Type.Literal('crypto'), Type.Literal('card')]),
      card: Type.Optional(
        Type.Object(
          {
            processor: Type.String(),
            state: Type.String({ description: 'the processor-side payment state: pending, processing, declined, succeeded, refunded' }),
            payment_reference: Type.Optional(Type.String()),
            brand: Type.Optional(Type.String({ description: 'the card brand the processor reported (visa, mastercard, …)' })),
            last4: Type.Optional(Type.String({ description: 'the last four digits the processor reported' })),
            decline_code: Type.Optional(Type.String({ description: 'the latest decline, while the order is unpaid' })),
            charges: Type.Integer({ description: 'successful charges reported (2 or more: a duplicate payment)' }),
          },
          { description: 'card orders: the payment at the processor' },
        ),
      ),
      deliveries: Type.Array(DeliverySchema),
    }),
  },
  async handler(req, _reply, deps) {
    const d = await orderDetail(deps, merchantOf(req.portal), req.params.order_id);
    if (!d) throw new AppError('order_not_found', 'order not found', 'order_id');
    return {
      order: d.order,
      decimals: d.decimals,
      amount: formatUnits(BigInt(d.order.amount_wei), d.decimals),
      fee: formatUnits(BigInt(d.fee_amount), FEE_DECIMALS, 2),
      timeline: d.timeline.map((t) => ({ ...(t.from_status ? { from_status: t.from_status } : {}), to_status: t.to_status, trigger: t.trigger, at: t.created_at.toISOString() })),
      ...(d.proof ? { proof: d.proof } : {}),
      ...(d.explorerUrl ? { explorer_url: d.explorerUrl } : {}),
      ...(d.settlementExplorerUrl ? { settlement_explorer_url: d.settlementExplorerUrl } : {}),
      ...(d.refundExplorerUrl ? { refund_explorer_url: d.refundExplorerUrl } : {}),
      rail: railOf(d.order.flow),
      ...(d.card
        ? {
            card: {
              processor: d.card.processor,
              state: d.card.state,
              charges: d.card.charges,
              ...(d.card.payment_reference ? { payment_reference: d.card.payment_reference } : {}),
              ...(d.card.card_brand ? { brand: d.card.card_brand } : {}),
              ...(d.card.card_last4 ? { last4: d.card.card_last4 } : {}),
              ...(d.card.decline_code ? { decline_code: d.card.decline_code } : {}),
            },
          }
        : {}),
      deliveries: d.deliveries.map(deliveryView),
    };
  },
});
