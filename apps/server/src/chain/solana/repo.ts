/** SQL of the Solana watcher (orders of flow SOL_DIRECT, its cursors, its transfer rows). */
import type { Queryable } from '../../db/database.ts';
import type { AddressCursor } from './scan.ts';

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

/**
 * The merchant wallets that open orders may be paid to: the chain's registered wallets plus the
 * distinct pay-to wallets of open orders (a wallet replaced after an order was created). Bounded by
 * merchants, not orders: the second part is a loose index scan over `orders_live_terms_key`
 * (recursive CTE, one index probe per distinct wallet), as the EVM watcher's listWatchedAddresses.
 */
export async function listPayToWallets(q: Queryable, chainId: number): Promise<string[]> {
  const live = `FROM orders WHERE chain_id = $1 AND status = 'CHECKOUT_VERIFIED' AND transfer_id IS NULL`;
  const { rows } = await q.query<{ address: string }>(
    `WITH RECURSIVE pay_to (a) AS (
       SELECT min(pay_to_address) ${live}
       UNION ALL
       SELECT (SELECT min(pay_to_address) ${live} AND pay_to_address > pay_to.a) FROM pay_to WHERE pay_to.a IS NOT NULL
     )
     SELECT address FROM merchant_wallets WHERE chain_id = $1
     UNION
     SELECT a FROM pay_to WHERE a IS NOT NULL`,
    [chainId],
  );
  return rows.map((r) => r.address).sort();
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

export async function getSolanaOrder(q: Queryable, id: string): Promise<(LiveSolanaOrder & { transfer_id: number | null; expires_at: Date }) | undefined> {
  const { rows } = await q.query<LiveSolanaOrder & { transfer_id: number | null; expires_at: Date }>(
    `SELECT id, token_contract, pay_to_address, amount_wei::text AS amount_wei, status, transfer_id, expires_at FROM orders WHERE id = $1 AND flow = 'SOL_DIRECT' FOR UPDATE`,
    [id],
  );
  return rows[0];
}

/** Each followed address's reading position: its cursor and unfinished backlog walk (scan.ts catchUp). */
export async function loadCursors(q: Queryable, chainId: number): Promise<Map<string, AddressCursor>> {
  const { rows } = await q.query<{ address: string; signature: string | null; backlog: string[]; backlog_end: string | null }>('SELECT address, signature, backlog, backlog_end FROM solana_cursors WHERE chain_id = $1', [chainId]);
  return new Map(rows.map((r) => [r.address, { until: r.signature ?? undefined, pages: r.backlog ?? [], end: r.backlog_end ?? undefined }]));
}

/** Saves the boundaries of an address's backlog walk (its cursor is left as it is). */
export async function saveBacklog(q: Queryable, chainId: number, address: string, pages: readonly string[], end: string | undefined): Promise<void> {
  await q.query(
    `INSERT INTO solana_cursors (chain_id, address, signature, backlog, backlog_end) VALUES ($1, $2, NULL, $3::text[], $4)
     ON CONFLICT (chain_id, address) DO UPDATE SET backlog = EXCLUDED.backlog, backlog_end = EXCLUDED.backlog_end, updated_at = now()`,
    [chainId, address, pages, end ?? null],
  );
}

export async function saveCursor(q: Queryable, chainId: number, address: string, signature: string): Promise<void> {
  await q.query(
    `INSERT INTO solana_cursors (chain_id, address, signature) VALUES ($1, $2, $3)
     ON CONFLICT (chain_id, address) DO UPDATE SET signature = EXCLUDED.signature, updated_at = now()`,
    [chainId, address, signature],
  );
}

/**
 * Forgets the cursors of addresses no longer followed (paid or closed orders' reference keys) that
 * have not moved for a day: one row per order would otherwise stay forever. An address followed
 * again later simply pages its history from the start. An address with an unfinished backlog is
 * still followed (the watcher reads it to the end), so it is in `followed`.
 */
export async function pruneCursors(q: Queryable, chainId: number, followed: readonly string[]): Promise<number> {
  const { rows } = await q.query<{ n: number | string }>(
    `WITH gone AS (
       DELETE FROM solana_cursors WHERE chain_id = $1 AND NOT (address = ANY($2::text[])) AND updated_at < now() - interval '1 day' RETURNING 1
     ) SELECT count(*) AS n FROM gone`,
    [chainId, followed],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Records one transfer (identity: chain, signature, instruction index; `block_hash` is '' on
 * Solana, where a confirmed slot is not replaced). Returns its id, or undefined when it was already
 * recorded: the unique key is what makes attribution happen once.
 */
export async function insertTransfer(
  q: Queryable,
  t: {
    chainId: number;
    mint: string;
    signature: string;
    instructionIndex: number;
    slot: bigint;
    blockTime: Date | null;
    from: string;
    to: string;
    amount: bigint;
    matchStatus: 'matched' | 'underpaid' | 'late' | 'duplicate' | 'unmatched' | 'claimed';
    orderId: string | null;
  },
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
