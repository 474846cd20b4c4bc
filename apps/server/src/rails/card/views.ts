import { Type } from '@sinclair/typebox';
import { formatUnits } from '@tollgate/protocol';
import type { OrderRow } from '../../orders/repo.ts';
import type { CardRefundRow } from './repo.ts';

/** Answer of POST /checkout/v1/sessions/{checkout_id}/card. */
export const CardStartSchema = Type.Object({
  order_id: Type.String(),
  flow: Type.String({ description: 'FIAT_<PROCESSOR>, e.g. FIAT_TEST or FIAT_STRIPE' }),
  processor: Type.String(),
  currency: Type.String({ description: 'the session fiat_currency' }),
  amount: Type.String({ description: 'the session fiat_amount (no conversion from the crypto price)' }),
  order_status: Type.String(),
  payment_state: Type.String({ description: 'pending, processing, declined (the payer may retry), succeeded or refunded' }),
  expires_at: Type.Integer({ description: 'Unix seconds: the card payment must complete before this' }),
  next_action: Type.Object({
    type: Type.String({ description: 'card_form: POST the card to Tollgate (TEST processor); redirect: send the payer to url (the processor\'s hosted page)' }),
    url: Type.Optional(Type.String()),
  }),
});

/** A card refund record. */
export const CardRefundSchema = Type.Object({
  refund_id: Type.String(),
  order_id: Type.String(),
  amount: Type.String({ description: 'decimal string in the order currency' }),
  currency: Type.String(),
  status: Type.String({ description: 'pending, succeeded or failed' }),
  reason: Type.Optional(Type.String()),
  requested_by: Type.String({ description: 'merchant, operator or processor' }),
  created_at: Type.String(),
  order_status: Type.String(),
  refunded_amount: Type.String({ description: 'total refunded on the order so far' }),
});

export const RefundBodySchema = Type.Object(
  {
    amount: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'decimal string; default: everything not yet refunded' })),
    reason: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export function refundView(r: CardRefundRow, o: OrderRow) {
  const d = o.decimals;
  return {
    refund_id: r.id,
    order_id: r.order_id,
    amount: formatUnits(BigInt(r.amount), d, d),
    currency: o.fiat_currency ?? '',
    status: r.status,
    ...(r.reason ? { reason: r.reason } : {}),
    requested_by: r.requested_by,
    created_at: r.created_at.toISOString(),
    order_status: o.status,
    refunded_amount: formatUnits(BigInt(o.refunded_amount ?? '0'), d, d),
  };
}
