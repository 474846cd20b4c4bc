/** SQL of the Solana watcher (orders of flow SOL_DIRECT, its cursors, its transfer rows). */
import type { Queryable } from '../../db/database.ts';

export interface LiveSolanaOrder {
  id: string;
  token_contract: string;
  /** the merchant's wallet */
  pay_to_address: string;
  amount_wei: string;
  status: string;
}

/** Orders waiting for a payment (nothing attributed yet), at most `limit`. */
export async function listAwaitingPayment(q: Queryable, chainId: number, limit: number): Promise<LiveSolanaOrder[]> {
  const { rows } = await q.query<LiveSolanaOrder>(
    `SELECT id, token_contract, pay_to_address, amount_wei::text AS amount_wei, status FROM orders
      WHERE chain_id = $1 AND status = 'CHECKOUT_VERIFIED' AND transfer_id IS NULL AND flow = 'SOL_DIRECT' LIMIT $2`,
    [chainId, limit],
  );
  return rows;
}

/** The distinct (merchant wallet, mint) pairs of the orders waiting for a payment: one token account each. */
export async function listAwaitingPayTo(q: Queryable, chainId: number): Promise<{ pay_to_address: string; token_contract: string }[]> {
  const { rows } = await q.query<{ pay_to_address: string; token_contract: string }>(
    `SELECT DISTINCT pay_to_address, token_contract FROM orders
      WHERE chain_id = $1 AND status = 'CHECKOUT_VERIFIED' AND transfer_id IS NULL AND flow = 'SOL_DIRECT'`,
    [chainId],
  );
  return rows;
}

/** Orders with an attributed payment that is not finalized yet (finality pass). */
export async function listAwaitingFinality(q: Queryable, chainId: number): Promise<{ id: string; status: 'CHECKOUT_VERIFIED' | 'PAYMENT_CONFIRMED'; tx_hash: string }[]> {
  const { rows } = await q.query<{ id: string; status: 'CHECKOUT_VERIFIED' | 'PAYMENT_CONFIRMED'; tx_hash: string }>(
    `SELECT id, status, tx_hash FROM orders
      WHERE chain_id = $1 AND transfer_id IS NOT NULL AND status IN ('CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED') AND flow = 'SOL_DIRECT'`,
    [chainId],
  );
  return rows;
}

export async function getSolanaOrder(q: Queryable, id: string): Promise<(LiveSolanaOrder & { transfer_id: number | null }) | undefined> {
  const { rows } = await q.query<LiveSolanaOrder & { transfer_id: number | null }>(
    `SELECT id, token_contract, pay_to_address, amount_wei::text AS amount_wei, status, transfer_id FROM orders WHERE id = $1 AND flow = 'SOL_DIRECT' FOR UPDATE`,
    [id],
  );
  return rows[0];
}

export async function loadCursors(q: Queryable, chainId: number): Promise<Map<string, string>> {
  const { rows } = await q.query<{ address: string; signature: string }>('SELECT address, signature FROM solana_cursors WHERE chain_id = $1', [chainId]);
  return new Map(rows.map((r) => [r.address, r.signature]));
}

export async function saveCursor(q: Queryable, chainId: number, address: string, signature: string): Promise<void> {
  await q.query(
    `INSERT INTO solana_cursors (chain_id, address, signature) VALUES ($1, $2, $3)
     ON CONFLICT (chain_id, address) DO UPDATE SET signature = EXCLUDED.signature, updated_at = now()`,
    [chainId, address, signature],
  );
}

/**
 * Records one transfer (identity: chain, signature, instruction index; `block_hash` is '' on
 * Solana, where a confirmed slot is not replaced). Returns its id, or undefined when it was already
 * recorded: the unique key is what makes attribution happen once.
 */
export async function insertTransfer(
  q: Queryable,
  t: { chainId: number; mint: string; signature: string; instructionIndex: number; slot: bigint; blockTime: Date | null; from: string; to: string; amount: bigint; matchStatus: 'matched' | 'underpaid' | 'late' | 'duplicate' | 'unmatched'; orderId: string | null },
): Promise<number | undefined> {
  const { rows } = await q.query<{ id: number | string }>(
    `INSERT INTO chain_transfers (chain_id, token_contract, tx_hash, log_index, block_number, block_hash, block_timestamp, from_address, to_address, amount_wei, match_status, order_id)
     VALUES ($1, $2, $3, $4, $5, '', $6, $7, $8, $9, $10, $11)
     ON CONFLICT (chain_id, tx_hash, log_index, block_hash) DO NOTHING RETURNING id`,
    [t.chainId, t.mint, t.signature, t.instructionIndex, t.slot.toString(), t.blockTime, t.from, t.to, t.amount.toString(), t.matchStatus, t.orderId],
  );
  return rows[0] ? Number(rows[0].id) : undefined;
}

/**
 * The chain's scan position for the expiry sweeper (orders/repo.ts listExpirable): every transfer
 * confirmed before `scannedAt` has been seen, so an order past its expiry by then can expire.
 */
export async function saveScanPosition(q: Queryable, chainId: number, slot: bigint, scannedAt: Date, genesisHash: string): Promise<void> {
  await q.query(
    `INSERT INTO chain_cursors (chain_id, block_number, block_hash, block_timestamp, genesis_hash) VALUES ($1, $2, '', $3, $4)
     ON CONFLICT (chain_id) DO UPDATE SET block_number = EXCLUDED.block_number, block_timestamp = EXCLUDED.block_timestamp,
       genesis_hash = EXCLUDED.genesis_hash, updated_at = now()`,
    [chainId, slot.toString(), scannedAt, genesisHash],
  );
}
