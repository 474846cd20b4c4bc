import type { Database, Queryable } from '../db/database.ts';
import { WHOLE_TX, type ClaimPurpose } from '../orders/claims.ts';

/** SQL of the executor's rows (`settlements`): one row per signed transaction, recorded before it is sent. */

/**
 * pending: recorded, maybe not broadcast; sent: a node accepted it; confirmed: mined, succeeded and
 * deep enough; failed: reverted, or its nonce went to another transaction; replaced: another
 * attempt of the same (order, kind) was mined instead (fee bumping, migration 0017).
 */
type SettlementStatus = 'pending' | 'sent' | 'confirmed' | 'failed' | 'replaced';
export type SettlementKind = 'settle' | 'refund' | 'x402' | 'relay';

/** One row of `settlements`: a transaction of the executor, recorded before it is broadcast. */
export interface SettlementRecord {
  id: number;
  chainId: number;
  orderId: string;
  kind: SettlementKind;
  /** 0 for the first transaction of (order, kind); 1, 2, … for fee-bumped replacements (same nonce). */
  attempt: number;
  executor: `0x${string}`;
  nonce: number;
  rawTx: `0x${string}`;
  txHash: `0x${string}`;
  status: SettlementStatus;
  failureReason: string | null;
  blockNumber: number | null;
  /** The chain history the nonce belongs to (executor_epochs, migration 0025). */
  epoch: number;
  /** Milliseconds since the row was recorded, by the database clock (only from `unfinishedSettlements`). */
  ageMs?: number;
}

interface Row {
  id: number | string;
  chain_id: number;
  order_id: string;
  kind: SettlementKind;
  attempt: number | string;
  executor: `0x${string}`;
  nonce: number | string;
  raw_tx: `0x${string}`;
  tx_hash: `0x${string}`;
  status: SettlementStatus;
  failure_reason: string | null;
  block_number: number | string | null;
  epoch: number | string;
  age_ms?: number | string;
}

const COLUMNS = 'id, chain_id, order_id, kind, attempt, executor, nonce, raw_tx, tx_hash, status, failure_reason, block_number, epoch';

function toRecord(r: Row): SettlementRecord {
  return {
    id: Number(r.id),
    chainId: Number(r.chain_id),
    orderId: r.order_id,
    kind: r.kind,
    attempt: Number(r.attempt),
    executor: r.executor,
    nonce: Number(r.nonce),
    rawTx: r.raw_tx,
    txHash: r.tx_hash,
    status: r.status,
    failureReason: r.failure_reason,
    blockNumber: r.block_number === null ? null : Number(r.block_number),
    epoch: Number(r.epoch),
    ...(r.age_ms !== undefined ? { ageMs: Number(r.age_ms) } : {}),
  };
}

/**
 * The transaction that stands for (order, kind): its finished attempt (confirmed or failed) when
 * there is one, else its latest attempt (the highest fee).
 */
export async function findSettlement(q: Queryable, chainId: number, orderId: string, kind: SettlementKind): Promise<SettlementRecord | undefined> {
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS} FROM settlements WHERE chain_id = $1 AND order_id = $2 AND kind = $3
      ORDER BY (status IN ('confirmed', 'failed')) DESC, attempt DESC LIMIT 1`,
    [chainId, orderId, kind],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** Every attempt of (order, kind), first to last. */
export async function settlementAttempts(q: Queryable, chainId: number, orderId: string, kind: SettlementKind): Promise<SettlementRecord[]> {
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS}, floor(extract(epoch FROM now() - created_at) * 1000) AS age_ms FROM settlements
      WHERE chain_id = $1 AND order_id = $2 AND kind = $3 ORDER BY attempt`,
    [chainId, orderId, kind],
  );
  return rows.map(toRecord);
}

/**
 * The highest nonce the executor holds in the chain's epoch (-1: none), and the highest of its
 * confirmed transactions. A row failed without being mined (its nonce went to another
 * transaction, or its chain was reset) holds none: counting it would leave a gap the chain never
 * fills, and every later transaction would wait behind it.
 */
export async function recordedNonces(q: Queryable, chainId: number, executor: string, epoch: number): Promise<{ last: number; confirmed: number }> {
  // attempt = 0: replacements reuse their first attempt's nonce, and the partial unique index
  // (settlements_nonce_key) serves a query that names it.
  const { rows } = await q.query<{ n: number | string | null; c: number | string | null }>(
    `SELECT max(nonce) FILTER (WHERE NOT (status = 'failed' AND block_number IS NULL)) AS n, max(nonce) FILTER (WHERE status = 'confirmed') AS c
       FROM settlements WHERE chain_id = $1 AND executor = $2 AND epoch = $3 AND attempt = 0`,
    [chainId, executor, epoch],
  );
  const num = (v: number | string | null | undefined) => (v === null || v === undefined ? -1 : Number(v));
  return { last: num(rows[0]?.n), confirmed: num(rows[0]?.c) };
}

/** What `adoptGenesis` found; `epoch` is the chain's executor epoch now. */
export type EpochOutcome = { kind: 'same' | 'first'; epoch: number } | { kind: 'reset'; epoch: number; failed: number };

/**
 * Records the genesis (block 0 hash) the executor sees on a chain. First look: adopted as epoch 0
 * (rows from before migration 0025 are epoch 0). Another genesis than the recorded one: the chain
 * was reset under the same id: a new epoch (resetEpoch).
 */
export async function adoptGenesis(db: Database, chainId: number, genesis: string): Promise<EpochOutcome> {
  const g = genesis.toLowerCase();
  const ins = await db.query<{ epoch: number }>('INSERT INTO executor_epochs (chain_id, genesis) VALUES ($1, $2) ON CONFLICT (chain_id) DO NOTHING RETURNING epoch', [chainId, g]);
  if (ins.rows[0]) return { kind: 'first', epoch: Number(ins.rows[0].epoch) };
  const { rows } = await db.query<{ genesis: string; epoch: number }>('SELECT genesis, epoch FROM executor_epochs WHERE chain_id = $1', [chainId]);
  const cur = rows[0]!;
  if (cur.genesis === g) return { kind: 'same', epoch: Number(cur.epoch) };
  return resetEpoch(db, chainId, Number(cur.epoch), g, `chain reset: genesis ${cur.genesis.slice(0, 10)}… became ${g.slice(0, 10)}…`);
}

/**
 * Moves the chain to the next executor epoch (unless another process did already: its epoch is
 * returned) and fails the unfinished rows of older epochs, in one transaction: their transactions
 * exist on no chain this gateway talks to, and the orders they settled follow the failed row as
 * after a revert. Called on a new genesis, and when the chain's nonce is below one of our
 * confirmed transactions (its history was replaced: executor.ts #recordLocked).
 */
export async function resetEpoch(db: Database, chainId: number, fromEpoch: number, genesis: string, reason: string): Promise<EpochOutcome> {
  return db.transaction(async (tx) => {
    const up = await tx.query<{ epoch: number }>('UPDATE executor_epochs SET epoch = epoch + 1, genesis = $3, updated_at = now() WHERE chain_id = $1 AND epoch = $2 RETURNING epoch', [chainId, fromEpoch, genesis.toLowerCase()]);
    if (!up.rows[0]) {
      const { rows } = await tx.query<{ epoch: number }>('SELECT epoch FROM executor_epochs WHERE chain_id = $1', [chainId]);
      return { kind: 'same', epoch: Number(rows[0]!.epoch) };
    }
    const epoch = Number(up.rows[0].epoch);
    const failed = await tx.query(
      `UPDATE settlements SET status = 'failed', failure_reason = $3, updated_at = now()
        WHERE chain_id = $1 AND status IN ('pending', 'sent') AND epoch < $2 RETURNING id`,
      [chainId, epoch, `${reason}; this transaction exists on no current chain`],
    );
    return { kind: 'reset', epoch, failed: failed.rows.length };
  });
}

type NewRow = Pick<SettlementRecord, 'chainId' | 'orderId' | 'kind' | 'executor' | 'nonce' | 'rawTx' | 'txHash' | 'epoch'> & { attempt?: number };

/**
 * Records the intent (status pending). Undefined when the (order, kind) already has a row of this
 * attempt: the caller lost a race and must not send its transaction. A first attempt whose nonce
 * another first attempt holds throws a unique violation (a second executor instance on the key).
 *
 * The same statement claims every transfer of the transaction for its purpose (orders/claims.ts,
 * a whole-transaction claim): the claim exists exactly when the transaction is recorded, before it
 * is broadcast, so no watcher or verify can count what it moves for anything else.
 */
export async function insertSettlement(q: Queryable, r: NewRow, companion?: CompanionInsert): Promise<SettlementRecord | undefined> {
  const values = [r.chainId, r.orderId, r.kind, r.attempt ?? 0, r.executor.toLowerCase(), r.nonce, r.rawTx.toLowerCase(), r.txHash.toLowerCase(), r.epoch];
  const claim = companion?.claim ?? defaultClaim(r);
  const n = companion?.params.length ?? 0;
  const v = (i: number) => `$${n + i + 1}`;
  const p = values.length;
  // x402 rows without a companion (a fee-bumped attempt): the purpose of the authorization's challenge, if any.
  const purpose = claim ? v(p) : `(SELECT CASE WHEN challenge_id IS NULL THEN 'x402_settlement' ELSE 'mpp_challenge' END FROM x402_authorizations WHERE id = ${v(1)})`;
  const purposeId = claim ? v(p + 1) : `(SELECT COALESCE(challenge_id, id) FROM x402_authorizations WHERE id = ${v(1)})`;
  const { rows } = await q.query<Row>(
    `WITH ${companion ? `companion AS (${companion.sql}),` : ''}
     s AS (
       INSERT INTO settlements (chain_id, order_id, kind, attempt, executor, nonce, raw_tx, tx_hash, epoch, status)
       SELECT ${values.map((_, i) => v(i)).join(', ')}, 'pending' ${companion ? 'WHERE EXISTS (SELECT 1 FROM companion)' : ''}
       ON CONFLICT (chain_id, order_id, kind, attempt) DO NOTHING RETURNING ${COLUMNS}
     ), claimed AS (
       INSERT INTO transfer_claims (chain_id, tx_ref, log_index, purpose, purpose_id)
       SELECT chain_id, tx_hash, ${WHOLE_TX}, ${purpose}, ${purposeId} FROM s ON CONFLICT DO NOTHING
     )
     SELECT * FROM s`,
    [...(companion?.params ?? []), ...values, ...(claim ? [claim.purpose, claim.purposeId] : [])],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** The purpose a settlement row's transaction is claimed for, when its kind says it (x402: see insertSettlement). */
function defaultClaim(r: NewRow): { purpose: ClaimPurpose; purposeId: string } | undefined {
  switch (r.kind) {
    case 'refund':
      return { purpose: 'refund', purposeId: r.orderId };
    case 'settle':
    case 'relay':
      return { purpose: 'order', purposeId: r.orderId };
    case 'x402':
      return undefined;
  }
}

/**
 * A row another capability writes with a settlement (x402: the authorization's claim): an
 * `INSERT … ON CONFLICT DO NOTHING RETURNING …` with parameters $1..$n. No row returned (the
 * companion exists already) → the settlement is not recorded either.
 */
export interface CompanionInsert {
  sql: string;
  params: unknown[];
  /** The purpose the transaction's transfers are claimed for (default: by the row's kind). */
  claim?: { purpose: ClaimPurpose; purposeId: string };
}

/** Marks pending rows sent, many in one statement (the executor's group commit of broadcasts). */
export async function markSentMany(q: Queryable, ids: readonly number[]): Promise<SettlementRecord[]> {
  const { rows } = await q.query<Row>(`UPDATE settlements SET status = 'sent', updated_at = now() WHERE id = ANY($1::bigint[]) AND status = 'pending' RETURNING ${COLUMNS}`, [[...ids]]);
  return rows.map(toRecord);
}

/**
 * Finishes an attempt (confirmed or failed) and marks every other unfinished attempt of the same
 * (order, kind) replaced, in ONE statement: there is never a moment when two attempts of a
 * settlement are finished, or one is finished while a sibling still looks sendable.
 */
export async function finishAttempt(q: Queryable, id: number, to: 'confirmed' | 'failed', extra: { blockNumber?: number; failureReason?: string } = {}): Promise<SettlementRecord | undefined> {
  const { rows } = await q.query<Row>(
    `WITH w AS (
       UPDATE settlements SET status = $2, block_number = coalesce($3, block_number), failure_reason = coalesce($4, failure_reason), updated_at = now()
        WHERE id = $1 AND status IN ('pending', 'sent') RETURNING ${COLUMNS}
     ), r AS (
       UPDATE settlements s SET status = 'replaced', updated_at = now() FROM w
        WHERE s.chain_id = w.chain_id AND s.order_id = w.order_id AND s.kind = w.kind AND s.id <> w.id AND s.status IN ('pending', 'sent')
     )
     SELECT * FROM w`,
    [id, to, extra.blockNumber ?? null, extra.failureReason ?? null],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/**
 * Unfinished rows (pending or sent) of the oldest `limit` unfinished (order, kind) groups of a
 * chain, with their age: the reconciler's work. Every unfinished attempt of a group comes along.
 */
export async function unfinishedSettlements(q: Queryable, chainId: number, limit = 100): Promise<SettlementRecord[]> {
  const { rows } = await q.query<Row>(
    `SELECT ${COLUMNS}, floor(extract(epoch FROM now() - created_at) * 1000) AS age_ms FROM settlements
      WHERE chain_id = $1 AND status IN ('pending', 'sent')
        AND (order_id, kind) IN (SELECT order_id, kind FROM settlements WHERE chain_id = $1 AND status IN ('pending', 'sent') ORDER BY id LIMIT $2)
      ORDER BY id`,
    [chainId, limit],
  );
  return rows.map(toRecord);
}

/** The order statuses a finished settlement can still move (repo.DelegateOrderRow['status']). */
type OrderStatusOfSettlement = 'CHECKOUT_VERIFIED' | 'PAYMENT_CONFIRMED' | 'INVOICED' | 'FAILED' | 'EXPIRED' | 'CANCELLED';

/** Finished settlement rows (confirmed or failed) whose order has not moved yet. */
export async function finishedUnapplied(q: Queryable, chainId: number, limit: number): Promise<(SettlementRecord & { orderStatus: OrderStatusOfSettlement; callbackId: string | null })[]> {
  const { rows } = await q.query<Row & { order_status: OrderStatusOfSettlement; callback_id: string | null }>(
    `SELECT ${COLUMNS.split(', ')
      .map((c) => `s.${c}`)
      .join(', ')}, o.status AS order_status, o.callback_id
       FROM settlements s JOIN orders o ON o.id = s.order_id
      WHERE s.chain_id = $1 AND s.kind = 'settle' AND s.status IN ('confirmed', 'failed') AND o.status IN ('CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED')
      ORDER BY s.id LIMIT $2`,
    [chainId, limit],
  );
  return rows.map((r) => ({ ...toRecord(r), orderStatus: r.order_status, callbackId: r.callback_id }));
}
