import { Type, type TObject } from '@sinclair/typebox';
import { formatUnits } from '@tollgate/protocol';
import { allowPatchColumns, type OrderRow } from './repo.ts';
import { assembleStatusRecord, type CoreRecord, type OrderRowPart, type StatusRecordAssembly } from './row-parts.ts';
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

/**
 * The core's properties of the order status record (docs/orders.md "Status record"). Optional fields
 * appear once known; never null. The modules built on orders add theirs (OrderRowPart,
 * orders/row-parts.ts), placed among these.
 */
const CORE_PROPERTIES = {
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
  needs_reconciliation: Type.Optional(
    Type.Boolean({
      description: 'present (true) while a late, under- or duplicate payment recorded against the order is neither accepted nor orphaned: accept it (POST /api/v1/orders/{order_id}/accept-payment) or refund the payer',
    }),
  ),
  observed_transfers: Type.Optional(Type.Array(ObservedTransferSchema, { description: 'transfers recorded against the order: its payment, and late, under- or duplicate payments' })),
  refunded_amount: Type.Optional(Type.String({ description: 'the amount refunded so far (succeeded refunds of any rail, docs/refunds.md), a decimal string' })),
};

/**
 * The order status record's schema: the core's properties and the registered parts', assembled in
 * place by `registerOrderRowParts` (the routes hold this object from their module's load; their
 * schemas are read when the app is built and compiled on first use, both after the registration).
 */
export const OrderStatusRecordSchema: TObject = Type.Object(CORE_PROPERTIES);

/** Whether a recorded transfer still asks the merchant to act (accept or refund). */
function needsReconciliation(observed: readonly ObservedTransfer[]): boolean {
  return observed.some((t) => t.match_status !== 'matched' && !t.orphaned && !t.accepted);
}

const opt = <T>(k: string, v: T | null | undefined) => (v === null || v === undefined ? {} : { [k]: v });

/** The core's fields of an order; `fractionDigits`: the least the refunded amount is shown with (OrderRowPart.shownFractionDigits). */
function coreRecord(o: OrderRow, fractionDigits: number, observed: readonly ObservedTransfer[] = []) {
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
    ...(needsReconciliation(observed) ? { needs_reconciliation: true } : {}),
    // Succeeded refunds of any rail (docs/refunds.md), shortest unless a part asks for more digits (OrderRowPart.shownFractionDigits).
    ...(o.refunded_amount && o.refunded_amount !== '0' ? { refunded_amount: formatUnits(BigInt(o.refunded_amount), o.decimals, fractionDigits) } : {}),
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

/** The core record: its properties, its fields and their object order (coreRecord's, which webhook payloads keep). */
type Observed = [observed?: readonly ObservedTransfer[]];
const CORE: CoreRecord<Observed, ReturnType<typeof coreRecord>> = {
  properties: CORE_PROPERTIES,
  // The schema's order, except that coreRecord gives the refunded amount before the observed transfers.
  fieldOrder: [...Object.keys(CORE_PROPERTIES).filter((k) => k !== 'observed_transfers' && k !== 'refunded_amount'), 'refunded_amount', 'observed_transfers'],
  record: coreRecord,
};

/** The status record of the core plus `parts` (exported for its unit test; the server uses the registered parts'). */
export function statusRecordWith(parts: readonly OrderRowPart[]): StatusRecordAssembly<Observed, ReturnType<typeof coreRecord>> {
  return assembleStatusRecord(CORE, parts);
}

const registered: OrderRowPart[] = [];
let assembly = statusRecordWith([]);
let used = false;

/**
 * Registers the parts of the modules built on orders (the composition root, when main.ts loads):
 * reassembles the status record schema in place and allows the parts' columns in a transition's
 * patch. Process-wide and idempotent like `followTransitions`; a new part after the first record
 * was built throws, since the schema may have been compiled without it.
 */
export function registerOrderRowParts(...parts: OrderRowPart[]): void {
  const fresh = parts.filter((p) => !registered.includes(p));
  if (fresh.length === 0) return;
  if (used) throw new Error(`order row parts registered after the first status record: ${fresh.map((p) => p.name).join(', ')}`);
  const next = statusRecordWith([...registered, ...fresh]);
  allowPatchColumns(fresh.flatMap((p) => p.columns));
  registered.push(...fresh);
  assembly = next;
  OrderStatusRecordSchema.properties = next.properties;
}

/** The order status record of a row (and the transfers recorded against it). */
export function orderStatusRecord(o: OrderRow, observed: readonly ObservedTransfer[] = []) {
  used = true;
  return assembly.record(o, observed);
}
