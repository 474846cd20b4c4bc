import { keccak256, stringToBytes } from 'viem';

export interface ProofPayload {
  order_id: string;
  tx_hash: string;
  log_index: number;
  from_addr: string;
  to_addr: string;
  amount_wei: string;
  from_chain_id: number;
  token_contract: string;
  block_number: number;
  status: string;
}

/**
 * The historical `signature` of the payment record (wire.md): keccak256 over the UTF-8 bytes of
 * order_id ‖ tx_hash ‖ log_index ‖ from_addr ‖ to_addr ‖ amount_wei ‖ from_chain_id, decimals in
 * base 10, no separators. An unsigned hash, not a signature: anyone can recompute it.
 *
 * @example proofHash({ order_id: 'ord_x', tx_hash: '0xab…', log_index: 0, … }) // '0x…'
 */
export function proofHash(p: Pick<ProofPayload, 'order_id' | 'tx_hash' | 'log_index' | 'from_addr' | 'to_addr' | 'amount_wei' | 'from_chain_id'>): `0x${string}` {
  const s = `${p.order_id}${p.tx_hash}${p.log_index}${p.from_addr}${p.to_addr}${p.amount_wei}${p.from_chain_id}`;
  return keccak256(stringToBytes(s));
}
