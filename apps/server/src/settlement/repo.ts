import type { Queryable } from '../db/database.ts';

/**
 * SQL of the DELEGATE settlement capability.
 */

/** The last block each chain's watcher has scanned (its cursor), by chain id. */
export async function scannedHeads(q: Queryable): Promise<Map<number, number>> {
  const { rows } = await q.query<{ chain_id: number; block_number: number | string }>('SELECT chain_id, block_number FROM chain_cursors');
  return new Map(rows.map((r) => [Number(r.chain_id), Number(r.block_number)]));
}

export type SettlementStatus = 'pending' | 'sent' | 'confirmed' | 'failed';
export type SettlementKind = 'settle' | 'refund' | 'x402';

/** One row of `settlements`: a transaction of the executor, recorded before it is broadcast. */
export interface SettlementRecord {
  id: number;
  chainId: number;
  orderId: string;
  kind: SettlementKind;
  executor: `0x${string}`;
  nonce: number;
  rawTx: `0x${string}`;
  txHash: `0x${string}`;
  status: SettlementStatus;
  failureReason: string | null;
  blockNumber: number | null;
}

interface Row {
  id: number | string;
  chain_id: number;
  order_id: string;
  kind: SettlementKind;
  executor: `0x${string}`;
  nonce: number | string;
  raw_tx: `0x${string}`;
  tx_hash: `0x${string}`;
  status: SettlementStatus;
  failure_reason: string | null;
  block_number: number | string | null;
}

const COLUMNS = 'id, chain_id, order_id, kind, executor, nonce, raw_tx, tx_hash, status, failure_reason, block_number';

function toRecord(r: Row): SettlementRecord {
  return {
    id: Number(r.id),
    chainId: Number(r.chain_id),
    orderId: r.order_id,
    kind: r.kind,
    executor: r.executor,
    nonce: Number(r.nonce),
    rawTx: r.raw_tx,
    txHash: r.tx_hash,
    status: r.status,
    failureReason: r.failure_reason,
    blockNumber: r.block_number === null ? null : Number(r.block_number),
  };
}

export async function findSettlement(q: Queryable, chainId: number, orderId: string, kind: SettlementKind): Promise<SettlementRecord | undefined> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM settlements WHERE chain_id = $1 AND order_id = $2 AND kind = $3`, [chainId, orderId, kind]);
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** The highest nonce the executor has recorded on the chain, or -1. */
export async function lastRecordedNonce(q: Queryable, chainId: number, executor: string): Promise<number> {
  const { rows } = await q.query<{ n: number | string | null }>('SELECT max(nonce) AS n FROM settlements WHERE chain_id = $1 AND executor = $2', [chainId, executor]);
  return rows[0]?.n === null || rows[0]?.n === undefined ? -1 : Number(rows[0].n);
}

/**
 * Records the intent (status pending). Undefined when the order already has a row of this kind:
 * the caller lost a race and must not send its transaction.
 */
export async function insertSettlement(
  q: Queryable,
  r: Pick<SettlementRecord, 'chainId' | 'orderId' | 'kind' | 'executor' | 'nonce' | 'rawTx' | 'txHash'>,
): Promise<SettlementRecord | undefined> {
  const { rows } = await q.query<Row>(
    `INSERT INTO settlements (chain_id, order_id, kind, executor, nonce, raw_tx, tx_hash, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending')
     ON CONFLICT (chain_id, order_id, kind) DO NOTHING RETURNING ${COLUMNS}`,
    [r.chainId, r.orderId, r.kind, r.executor.toLowerCase(), r.nonce, r.rawTx.toLowerCase(), r.txHash.toLowerCase()],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** Moves a row forward; `from` guards against a concurrent writer having moved it already. */
export async function setSettlementStatus(
  q: Queryable,
  id: number,
  from: readonly SettlementStatus[],
  to: SettlementStatus,
  extra: { blockNumber?: number; failureReason?: string } = {},
): Promise<SettlementRecord | undefined> {
  const { rows } = await q.query<Row>(
    `UPDATE settlements SET status = $3, block_number = coalesce($4, block_number), failure_reason = coalesce($5, failure_reason), updated_at = now()
     WHERE id = $1 AND status = ANY($2::text[]) RETURNING ${COLUMNS}`,
    [id, [...from], to, extra.blockNumber ?? null, extra.failureReason ?? null],
  );
  return rows[0] ? toRecord(rows[0]) : undefined;
}

/** Rows not yet confirmed or failed, oldest first: the reconciler's work after a restart. */
export async function unfinishedSettlements(q: Queryable, chainId: number, limit = 100): Promise<SettlementRecord[]> {
  const { rows } = await q.query<Row>(`SELECT ${COLUMNS} FROM settlements WHERE chain_id = $1 AND status IN ('pending', 'sent') ORDER BY id LIMIT $2`, [chainId, limit]);
  return rows.map(toRecord);
}
