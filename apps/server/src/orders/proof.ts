import { keccak256, stringToBytes } from 'viem';
import type { OrderRow } from './repo.ts';

export interface ProofPayload {
  order_id: string;
  tx_hash: string;
  log_index: number;
  from_addr: string;
  to_addr: string;
  amount_wei: string;
  from_chain_id: number;
  /** the same as `from_chain_id`, under the name GOAT's server SDKs read (docs/migrating.md) */
  chain_id: number;
  flow: string;
  token_contract: string;
  block_number: number;
  status: string;
}

/**
 * The historical `signature` of the payment record (docs/orders.md, "Payment record"): keccak256 over the UTF-8 bytes of
 * order_id ‖ tx_hash ‖ log_index ‖ from_addr ‖ to_addr ‖ amount_wei ‖ from_chain_id, decimals in
 * base 10, no separators. An unsigned hash, not a signature: anyone can recompute it.
 *
 * @example proofHash({ order_id: 'ord_x', tx_hash: '0xab…', log_index: 0, … }) // '0x…'
 */
export function proofHash(p: Pick<ProofPayload, 'order_id' | 'tx_hash' | 'log_index' | 'from_addr' | 'to_addr' | 'amount_wei' | 'from_chain_id'>): `0x${string}` {
  const s = `${p.order_id}${p.tx_hash}${p.log_index}${p.from_addr}${p.to_addr}${p.amount_wei}${p.from_chain_id}`;
  return keccak256(stringToBytes(s));
}

/**
 * The payment record of a confirmed or invoiced order (`GET /api/v1/orders/{id}/proof`, the portal's
 * order page), or undefined while the order has no confirmed payment.
 */
export function paymentRecord(o: OrderRow): { payload: ProofPayload; signature: `0x${string}` } | undefined {
  const confirmed = o.status === 'PAYMENT_CONFIRMED' || o.status === 'INVOICED';
  if (!confirmed || !o.tx_hash || o.log_index === null || o.block_number === null || !o.paid_amount_wei) return undefined;
  const payload: ProofPayload = {
    order_id: o.id,
    tx_hash: o.tx_hash,
    log_index: o.log_index,
    from_addr: o.from_address,
    to_addr: o.pay_to_address,
    // the amount actually transferred (≥ amount_wei), as the on-chain log says
    amount_wei: o.paid_amount_wei,
    from_chain_id: o.chain_id,
    chain_id: o.chain_id,
    flow: o.flow,
    token_contract: o.token_contract,
    block_number: Number(o.block_number),
    status: o.status,
  };
  return { payload, signature: proofHash(payload) };
}
