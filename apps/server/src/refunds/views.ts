import { Type, type Static } from '@sinclair/typebox';
import { formatUnits } from '@tollgate/protocol';
import type { CardOrderRow } from '../rails/card/columns.ts';
import type { RefundRow } from './repo.ts';

/** A refund of any rail, as the merchant API, the `order.refunded` event and the portal show it (docs/refunds.md). */
export const RefundSchema = Type.Object({
  refund_id: Type.String(),
  order_id: Type.String(),
  rail: Type.String({ description: 'card (through the card processor), direct (the merchant sends from its wallet) or delegate (the executor returns pooled funds)' }),
  amount: Type.String({ description: 'decimal string in `currency`' }),
  amount_base_units: Type.String({ description: 'the same amount in base units: minor units of the fiat currency, or token base units' }),
  currency: Type.String({ description: 'the fiat currency of a card order, else the token symbol' }),
  status: Type.String({ description: 'pending, succeeded or failed' }),
  reason: Type.Optional(Type.String()),
  requested_by: Type.String({ description: 'merchant, operator or processor' }),
  processor_refund_id: Type.Optional(Type.String({ description: 'card: the refund at the processor' })),
  chain_id: Type.Optional(Type.Integer()),
  token_contract: Type.Optional(Type.String()),
  from_address: Type.Optional(Type.String({ description: 'direct: the wallet the refund must come from (the one that was paid)' })),
  to_address: Type.Optional(Type.String({ description: 'direct and delegate: the payer the refund goes to' })),
  tx_hash: Type.Optional(Type.String({ description: 'crypto: the refund transaction (direct: once the watcher saw it)' })),
  created_at: Type.String(),
  completed_at: Type.Optional(Type.String()),
  order_status: Type.String(),
  refunded_amount: Type.String({ description: 'total refunded (succeeded) on the order so far, decimal string' }),
});
export type RefundRecord = Static<typeof RefundSchema>;

export const RefundBodySchema = Type.Object(
  {
    amount: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'decimal string; default: everything not yet refunded' })),
    reason: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

const opt = <K extends string, V>(k: K, v: V | null | undefined) => (v === null || v === undefined ? {} : ({ [k]: v } as { [P in K]: V }));

export function refundRecord(r: RefundRow, o: CardOrderRow): RefundRecord {
  const d = o.decimals;
  // Fiat amounts keep their minor digits ('9.50'); token amounts are shortest ('0.75').
  const fmt = (v: bigint) => formatUnits(v, d, r.rail === 'card' ? d : 0);
  return {
    refund_id: r.id,
    order_id: r.order_id,
    rail: r.rail,
    amount: fmt(BigInt(r.amount)),
    amount_base_units: BigInt(r.amount).toString(),
    currency: r.currency ?? (r.rail === 'card' ? (o.fiat_currency ?? '') : o.token_symbol),
    status: r.status,
    ...opt('reason', r.reason),
    requested_by: r.requested_by,
    ...opt('processor_refund_id', r.processor_refund_id),
    ...opt('chain_id', r.chain_id),
    ...opt('token_contract', r.token_contract),
    ...opt('from_address', r.from_address),
    ...opt('to_address', r.to_address),
    ...opt('tx_hash', r.tx_hash),
    created_at: r.created_at.toISOString(),
    ...opt('completed_at', r.completed_at?.toISOString()),
    order_status: o.status,
    refunded_amount: fmt(BigInt(o.refunded_amount ?? '0')),
  };
}
