import type { Queryable } from '../db/database.ts';

/**
 * SQL of the DELEGATE settlement capability.
 */

/** The last block each chain's watcher has scanned (its cursor), by chain id. */
export async function scannedHeads(q: Queryable): Promise<Map<number, number>> {
  const { rows } = await q.query<{ chain_id: number; block_number: number | string }>('SELECT chain_id, block_number FROM chain_cursors');
  return new Map(rows.map((r) => [Number(r.chain_id), Number(r.block_number)]));
}
