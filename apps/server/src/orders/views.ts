import { Type } from '@sinclair/typebox';
import { formatUnits } from '@tollgate/protocol';
import type { OrderRow } from './repo.ts';
import type { ObservedTransfer } from './transfers-repo.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : undefined);

const ObservedTransferSchema = Type.Object({
  tx_hash: Type.String(),
  log_index: Type.Integer(),
  block_number: Type.Integer(),
  from_address: Type.String(),
  amount_wei: Type.String(),
  kind: Type.String({ description: 'matched (pays the order) | late (exact terms after expiry or cancellation) | underpaid (short beyond the merchant tolerance) | duplicate (the order was already paid); see docs/attribution.md' }),
  orphaned: Type.Boolean({ description: 'a reorg removed the transfer from the chain: it pays nothing and cannot be accepted' }),
  accepted: Type.Boolean({ description: 'the merchant accepted this late or under-payment; the order is INVOICED by it' }),
  confirmations: Type.Integer({ description: 'blocks on top of the transfer, its own included, as far as the gateway has scanned' }),
});

/** The order status record (docs/orders.md "Status record"). Optional fields appear once known; never null. */
export const OrderStatusRecordSchema = Type.Object({
  order_id: Type.String(),
  merchant_id: Type.String(),
  dapp_order_id: Type.String(),
  flow: Type.String(),
  chain_id: Type.Integer(),
  pay_to_chain_id: Type.Integer(),
  token_symbol: Type.String(),
  token_contract: Type.String(),
  from_address: Type.String(),
  pay_to_address: Type.String(),
  amount_wei: Type.String(),
  status: Type.String(),
  expires_at: Type.Integer({ description: 'Unix seconds' }),
  created_at: Type.String(),
  updated_at: Type.String(),
  tx_hash: Type.Optional(Type.String()),
  log_index: Type.Optional(Type.Integer()),
  block_number: Type.Optional(Type.Integer()),
  confirmations: Type.Optional(Type.Integer()),
  paid_amount_wei: Type.Optional(Type.String()),
  confirmed_at: Type.Optional(Type.String()),
  invoiced_at: Type.Optional(Type.String()),
  failure_reason: Type.Optional(Type.String()),
  checkout_id: Type.Optional(Type.String()),
  callback_status: Type.Optional(Type.String({ description: 'DELEGATE: pending | succeeded | failed' })),
  settlement_tx_hash: Type.Optional(Type.String({ description: 'DELEGATE: the settlement transaction (payout and callback in one transaction)' })),
  settled_at: Type.Optional(Type.String({ description: 'DELEGATE: when the settlement transaction reached finality' })),
  refund_tx_hash: Type.Optional(Type.String({ description: 'DELEGATE: the operator refund of a FAILED order to its payer' })),
  needs_reconciliation: Type.Optional(
    Type.Boolean({
      description: 'present (true) while a late, under- or duplicate payment recorded against the order is neither accepted nor orphaned: accept it (POST /api/v1/orders/{order_id}/accept-payment) or refund the payer',
    }),
  ),
  observed_transfers: Type.Optional(Type.Array(ObservedTransferSchema, { description: 'transfers recorded against the order: its payment, and late, under- or duplicate payments' })),
  fiat_currency: Type.Optional(Type.String({ description: 'card orders: the currency charged (ISO 4217)' })),
  fiat_amount: Type.Optional(Type.String({ description: 'card orders: the amount charged, a decimal string' })),
  payment_reference: Type.Optional(Type.String({ description: "card orders: the processor's payment reference" })),
  held_reasons: Type.Optional(
    Type.Array(Type.String(), {
      description: 'card orders: present while a paid card order is held in PAYMENT_CONFIRMED; each of duplicate_payment, conflict, refund, dispute, balance (docs/card-payments.md)',
    }),
  ),
  refunded_amount: Type.Optional(Type.String({ description: 'the amount refunded so far (succeeded refunds of any rail, docs/refunds.md), a decimal string' })),
  dispute_status: Type.Optional(Type.String({ description: 'card orders: opened, won or lost' })),
});

/** The card fields of the status record (rails/card); nothing for a crypto order. */
function cardFields(o: OrderRow) {
  if (!o.fiat_currency) return {};
  const held = o.held_reasons ?? [];
  return {
    fiat_currency: o.fiat_currency,
    ...(o.fiat_amount ? { fiat_amount: o.fiat_amount } : {}),
    ...(o.payment_reference ? { payment_reference: o.payment_reference } : {}),
    ...(held.length ? { held_reasons: [...held] } : {}),
    ...(o.dispute_status ? { dispute_status: o.dispute_status } : {}),
  };
}

/** Whether a recorded transfer still asks the merchant to act (accept or refund). */
function needsReconciliation(observed: readonly ObservedTransfer[]): boolean {
  return observed.some((t) => t.match_status !== 'matched' && !t.orphaned && !t.accepted);
}

export function orderStatusRecord(o: OrderRow, observed: ObservedTransfer[] = []) {
  const opt = <T>(k: string, v: T | null | undefined) => (v === null || v === undefined ? {} : { [k]: v });
  return {
    order_id: o.id,
    merchant_id: o.merchant_id,
    dapp_order_id: o.dapp_order_id,
    flow: o.flow,
    chain_id: o.chain_id,
    pay_to_chain_id: o.pay_to_chain_id,
    token_symbol: o.token_symbol,
    token_contract: o.token_contract,
    from_address: o.from_address,
    pay_to_address: o.pay_to_address,
    amount_wei: o.amount_wei,
    status: o.status,
    expires_at: Math.floor(o.expires_at.getTime() / 1000),
    created_at: o.created_at.toISOString(),
    updated_at: o.updated_at.toISOString(),
    ...opt('tx_hash', o.tx_hash),
    ...opt('log_index', o.log_index),
    ...opt('block_number', o.block_number === null ? null : Number(o.block_number)),
    ...opt('confirmations', o.confirmations),
    ...opt('paid_amount_wei', o.paid_amount_wei),
    ...opt('confirmed_at', iso(o.confirmed_at)),
    ...opt('invoiced_at', iso(o.invoiced_at)),
    ...opt('failure_reason', o.failure_reason),
    ...opt('checkout_id', o.checkout_id),
    ...opt('callback_status', o.callback_status),
    ...opt('settlement_tx_hash', o.settlement_tx_hash),
    ...opt('settled_at', iso(o.settled_at)),
    ...opt('refund_tx_hash', o.refund_tx_hash),
    ...(needsReconciliation(observed) ? { needs_reconciliation: true } : {}),
    ...cardFields(o),
    // Succeeded refunds of any rail (docs/refunds.md): fiat keeps its minor digits, tokens are shortest.
    ...(o.refunded_amount && o.refunded_amount !== '0' ? { refunded_amount: formatUnits(BigInt(o.refunded_amount), o.decimals, o.fiat_currency ? o.decimals : 0) } : {}),
    ...(observed.length
      ? {
          observed_transfers: observed.map((t) => ({
            tx_hash: t.tx_hash,
            log_index: t.log_index,
            block_number: Number(t.block_number),
            from_address: t.from_address,
            amount_wei: t.amount_wei,
            kind: t.match_status,
            orphaned: t.orphaned,
            accepted: t.accepted,
            confirmations: Number(t.confirmations),
          })),
        }
      : {}),
  };
}
