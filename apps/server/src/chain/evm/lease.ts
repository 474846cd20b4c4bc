import type { Queryable } from '../../db/database.ts';

/**
 * Leadership of one chain's watcher across processes sharing the database: a row in
 * `chain_leases` that the leader renews every tick and anybody may take once it has lapsed.
 *
 * Why a lease row rather than `pg_try_advisory_lock` (DESIGN.md's first idea): an advisory lock
 * belongs to a session, so it needs one pinned connection per chain for the life of the process;
 * through a transaction-mode pooler (PgBouncer) it silently does not work, and PGlite has no second
 * session to test it with. A lease is one conditional upsert, works the same on both backends, and
 * its expiry is judged by the database clock (`now()`), so skew between the processes' clocks
 * cannot give two leaders.
 *
 * The lease is an efficiency device, not the safety net: if a leader stalls past its lease (GC
 * pause, a slow RPC) while another takes over, both may run a step at once. Every write the
 * watcher makes is therefore safe under concurrency on its own (cursor row locked and compared,
 * orders locked `FOR UPDATE` and moved by conditional updates, unique keys on transfers,
 * audit rows and fee moves).
 */

/**
 * Takes or renews the lease of `chainId` for `holder` for `leaseMs`; true when `holder` now holds
 * it. The conditional `ON CONFLICT … DO UPDATE … WHERE` is one atomic statement: two processes
 * racing for a lapsed lease serialize on the row and exactly one sees its WHERE hold.
 *
 * @example
 * if (await acquireLease(db, 31337, 'w-3f9a', 5_000)) {
 *   // leader for the next 5 s: scan
 * }
 */
export async function acquireLease(q: Queryable, chainId: number, holder: string, leaseMs: number): Promise<boolean> {
  const { rows } = await q.query<{ holder: string }>(
    `INSERT INTO chain_leases (chain_id, holder, expires_at)
     VALUES ($1, $2, now() + $3::double precision * interval '1 millisecond')
     ON CONFLICT (chain_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
       WHERE chain_leases.expires_at < now() OR chain_leases.holder = EXCLUDED.holder
     RETURNING holder`,
    [chainId, holder, leaseMs],
  );
  return rows[0]?.holder === holder;
}

/**
 * Gives the lease up (graceful shutdown), so another process takes over at its next tick instead
 * of waiting for the lease to lapse. Only the holder's own lease is deleted.
 *
 * @example
 * await releaseLease(db, 31337, 'w-3f9a');
 */
export async function releaseLease(q: Queryable, chainId: number, holder: string): Promise<void> {
  await q.query('DELETE FROM chain_leases WHERE chain_id = $1 AND holder = $2', [chainId, holder]);
}

/**
 * The current unexpired holder of a chain's lease, if any (status pages and tests).
 *
 * @example
 * await leaseHolder(db, 31337); // 'w-3f9a' or undefined
 */
export async function leaseHolder(q: Queryable, chainId: number): Promise<string | undefined> {
  const { rows } = await q.query<{ holder: string }>('SELECT holder FROM chain_leases WHERE chain_id = $1 AND expires_at >= now()', [chainId]);
  return rows[0]?.holder;
}
