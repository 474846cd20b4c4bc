import type { Queryable } from '../db/database.ts';
import { CHAIN_CLOCK_SKEW_MS, takenBySql } from '../orders/claims.ts';
import { outboxCtes } from '../webhooks/outbox.ts';
import { outboxWritten } from '../webhooks/outbox-signal.ts';
import { indexedColumnsSql, type IndexedRow } from './indexed.ts';

/** Row shapes and SQL of machine payments; no business rules here. */
export interface RouteRow {
  merchant_id: string;
  route_canonical: string;
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  amount_wei: string;
  recipient: string;
  version: number;
  updated_at: Date;
}

/**
 * Sets the price of a route; every call that changes something increments `version` (a PUT that
 * repeats the current price changes nothing and keeps the version, so retries are harmless).
 */
export async function upsertRoute(q: Queryable, r: Omit<RouteRow, 'version' | 'updated_at'>): Promise<RouteRow> {
  const { rows } = await q.query<RouteRow>(
    `INSERT INTO mpp_routes AS r (merchant_id, route_canonical, chain_id, token_symbol, token_contract, amount_wei, recipient)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (merchant_id, route_canonical) DO UPDATE SET
       chain_id = EXCLUDED.chain_id, token_symbol = EXCLUDED.token_symbol, token_contract = EXCLUDED.token_contract,
       amount_wei = EXCLUDED.amount_wei, recipient = EXCLUDED.recipient,
       version = CASE WHEN (r.chain_id, r.token_symbol, r.token_contract, r.amount_wei, r.recipient)
                         = (EXCLUDED.chain_id, EXCLUDED.token_symbol, EXCLUDED.token_contract, EXCLUDED.amount_wei, EXCLUDED.recipient)
                      THEN r.version ELSE r.version + 1 END,
       updated_at = now()
     RETURNING *`,
    [r.merchant_id, r.route_canonical, r.chain_id, r.token_symbol, r.token_contract, r.amount_wei, r.recipient],
  );
  return rows[0]!;
}

export async function getRoute(q: Queryable, merchantId: string, routeCanonical: string): Promise<RouteRow | undefined> {
  const { rows } = await q.query<RouteRow>('SELECT * FROM mpp_routes WHERE merchant_id = $1 AND route_canonical = $2', [merchantId, routeCanonical]);
  return rows[0];
}

export async function listRoutes(q: Queryable, merchantId: string): Promise<RouteRow[]> {
  const { rows } = await q.query<RouteRow>('SELECT * FROM mpp_routes WHERE merchant_id = $1 ORDER BY route_canonical', [merchantId]);
  return rows;
}

export interface ChallengeRow {
  id: string;
  merchant_id: string;
  route_canonical: string;
  request_canonical: string;
  payer_addr: string;
  chain_id: number;
  token_contract: string;
  recipient: string;
  amount_wei: string;
  route_pricing_version: number;
  mac: string;
  issued_at: Date;
  expires_at: Date;
  status: 'OPEN' | 'PAID';
  tx_hash: string | null;
  log_index: number | null;
  block_number: number | null;
  /** The paying block's time (null on rows paid before migration 0023). */
  block_time: Date | null;
  paid_amount_wei: string | null;
  receipt_jws: string | null;
  paid_at: Date | null;
}

export async function insertChallenge(q: Queryable, c: Omit<ChallengeRow, 'status' | 'tx_hash' | 'log_index' | 'block_number' | 'block_time' | 'paid_amount_wei' | 'receipt_jws' | 'paid_at'>): Promise<void> {
  await q.query(
    `INSERT INTO mpp_challenges (id, merchant_id, route_canonical, request_canonical, payer_addr, chain_id, token_contract, recipient,
       amount_wei, route_pricing_version, mac, issued_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [c.id, c.merchant_id, c.route_canonical, c.request_canonical, c.payer_addr, c.chain_id, c.token_contract, c.recipient, c.amount_wei, c.route_pricing_version, c.mac, c.issued_at, c.expires_at],
  );
}

export async function getChallenge(q: Queryable, id: string, forUpdate = false): Promise<ChallengeRow | undefined> {
  const { rows } = await q.query<ChallengeRow>(`SELECT * FROM mpp_challenges WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  return rows[0];
}

/** A challenge with the watcher's records of one transaction on its chain (indexed.ts). */
export type ChallengeWithIndexed = ChallengeRow & { idx_cursor: number | null; idx_transfers: IndexedRow[] };

/**
 * Challenges, each with the watcher's records of the transaction presented for it, in one
 * statement (the verify's coalesced read, mpp/reads.ts): one answer per request, in order,
 * undefined for an unknown challenge. The join is a nested loop of primary-key probes (each
 * challenge, then its transaction's transfers by (chain_id, tx_hash)).
 */
export async function getChallengesWithIndexed(q: Queryable, reqs: readonly { id: string; txHash: string }[]): Promise<(ChallengeWithIndexed | undefined)[]> {
  const { rows } = await q.query<ChallengeRow & { req_ord: string | number; idx_cursor: number | null; idx_transfers: IndexedRow[] | string }>(
    `SELECT u.req_ord, c.*, ${indexedColumnsSql('u.req_tx')}
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(req_id, req_tx, req_ord)
       JOIN mpp_challenges c ON c.id = u.req_id`,
    [reqs.map((r) => r.id), reqs.map((r) => r.txHash)],
    { name: 'mpp_challenges_with_indexed' },
  );
  const out: (ChallengeWithIndexed | undefined)[] = new Array(reqs.length);
  for (const { req_ord, ...r } of rows) {
    // json arrives parsed from both adapters; a string (a driver without the json parser) is parsed here.
    out[Number(req_ord) - 1] = { ...r, idx_transfers: typeof r.idx_transfers === 'string' ? (JSON.parse(r.idx_transfers) as IndexedRow[]) : r.idx_transfers };
  }
  return out;
}

export interface ClaimInput {
  /** The challenge's merchant (the `mpp.payment.confirmed` event is its). */
  merchantId: string;
  id: string;
  chainId: number;
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  paidAmountWei: bigint;
  receiptJws: string;
  paidAt: Date;
  /** The transfer's token, sender and recipient (lowercase) and its block's time: for precedence against orders. */
  token: string;
  payer: string;
  recipient: string;
  blockTime: Date;
}
export type ClaimOutcome = 'claimed' | 'not_open' | 'transfer_taken';

/** The `mpp.payment.confirmed` event a claim writes when it pays its challenge. */
export interface ClaimEvent {
  id: string;
  /** JSON text, stored verbatim (mpp/events.ts builds it). */
  payload: string;
}

/**
 * Marks OPEN challenges paid, claims their transfers (chain, tx, log index) and writes the
 * `mpp.payment.confirmed` event of each claim made (webhooks/outbox.ts), in ONE statement: the
 * verify's claims, group-committed (mpp/claims.ts). The caller passes distinct challenges and
 * distinct transfers, each with its event, and delivery ids from mintDeliveryIds(items.length).
 * Each claim answers:
 * - `claimed`: the challenge was OPEN and the transfer free: claim, challenge and event written;
 * - `not_open`: the challenge is not OPEN (paid already, maybe by a concurrent writer: the UPDATE
 *   re-checks the status after waiting for the row's lock): nothing written for it;
 * - `transfer_taken`: the transfer is spent (claimed in the ledger by another challenge, an order
 *   or a transaction the gateway sent, committed before this statement began), or a live order
 *   outranks the challenge for it (precedence, docs/attribution.md: an unpaid order with exactly
 *   these terms — chain, token, recipient, payer, amount — that was live at the block's time), and
 *   this challenge is still OPEN: nothing written for it.
 * Concurrency: two writers of one challenge serialize on its row lock (the second sees it PAID);
 * a claim of the same transfer committed by another writer after this statement began makes the
 * INSERT fail with unique_violation on the claim's key, which aborts the whole statement — nothing
 * of it is written — and the caller runs it again: the other claim is committed by then and is
 * seen as taken.
 */
export async function claimTransfers(q: Queryable, items: readonly (ClaimInput & { event: ClaimEvent })[], deliveryIds: readonly string[]): Promise<ClaimOutcome[]> {
  const { rows } = await q.query<{ id: string; claimed: boolean; taken_open: boolean }>(
    `WITH i AS (
       SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::int[], $5::bigint[], $6::numeric[], $7::text[], $8::timestamptz[],
           $9::text[], $10::text[], $11::text[], $13::text[], $14::text[], $15::text[], $16::timestamptz[]) WITH ORDINALITY
         AS u(id, chain_id, tx_hash, log_index, block_number, paid_amount_wei, receipt_jws, paid_at, merchant_id, event_id, payload,
              token, payer, recipient, block_time, ord)
     ), taken AS (
       SELECT i.id FROM i
        WHERE ${takenBySql('i.chain_id', 'i.tx_hash', 'i.log_index', "'mpp_challenge'", 'i.id')}
           OR EXISTS (SELECT 1 FROM orders o
                       WHERE o.chain_id = i.chain_id AND o.token_contract = i.token AND o.pay_to_address = i.recipient
                         AND o.from_address = i.payer AND o.amount_wei = i.paid_amount_wei
                         AND o.status = 'CHECKOUT_VERIFIED' AND o.transfer_id IS NULL
                         AND o.expires_at >= i.block_time AND o.created_at <= i.block_time + interval '${CHAIN_CLOCK_SKEW_MS / 1000} seconds')
     ), paid AS (
       UPDATE mpp_challenges c SET status = 'PAID', tx_hash = i.tx_hash, log_index = i.log_index, block_number = i.block_number,
         block_time = i.block_time, paid_amount_wei = i.paid_amount_wei, receipt_jws = i.receipt_jws, paid_at = i.paid_at
       FROM i WHERE c.id = i.id AND c.status = 'OPEN' AND i.id NOT IN (SELECT id FROM taken)
       RETURNING c.id, i.chain_id, i.tx_hash, i.log_index, i.paid_amount_wei, i.payer
     ), claimed AS (
       INSERT INTO transfer_claims (chain_id, tx_ref, log_index, purpose, purpose_id, amount_wei, payer)
       SELECT chain_id, tx_hash, log_index, 'mpp_challenge', id, paid_amount_wei, payer FROM paid RETURNING purpose_id AS challenge_id
     ), events AS (
       SELECT i.event_id, i.merchant_id, 'mpp.payment.confirmed'::text AS event, i.payload, NULL::text AS order_id, false AS test,
         i.paid_at AS created_at, i.ord
       FROM i JOIN claimed ON claimed.challenge_id = i.id
     ), ${outboxCtes('events', '$12')}
     SELECT i.id,
       EXISTS (SELECT 1 FROM claimed WHERE claimed.challenge_id = i.id) AS claimed,
       (i.id IN (SELECT id FROM taken) AND EXISTS (SELECT 1 FROM mpp_challenges c WHERE c.id = i.id AND c.status = 'OPEN')) AS taken_open
     FROM i`,
    [
      items.map((c) => c.id),
      items.map((c) => c.chainId),
      items.map((c) => c.txHash),
      items.map((c) => c.logIndex),
      items.map((c) => c.blockNumber.toString()),
      items.map((c) => c.paidAmountWei.toString()),
      items.map((c) => c.receiptJws),
      items.map((c) => c.paidAt),
      items.map((c) => c.merchantId),
      items.map((c) => c.event.id),
      items.map((c) => c.event.payload),
      deliveryIds,
      items.map((c) => c.token),
      items.map((c) => c.payer),
      items.map((c) => c.recipient),
      items.map((c) => c.blockTime),
    ],
    // Named: planned once per connection, not per batch (a statement of seven CTEs is not cheap to plan).
    { name: 'mpp_claim_transfers_v3' },
  );
  if (rows.some((r) => r.claimed)) outboxWritten();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return items.map((c) => {
    const r = byId.get(c.id);
    return r?.claimed ? 'claimed' : r?.taken_open ? 'transfer_taken' : 'not_open';
  });
}

/** A merchant's paid machine payments, newest first, keyset-paginated by `paid_at`. */
export async function listPaidChallenges(q: Queryable, merchantId: string, limit: number, before?: Date): Promise<ChallengeRow[]> {
  const { rows } = await q.query<ChallengeRow>(
    `SELECT * FROM mpp_challenges WHERE merchant_id = $1 AND status = 'PAID' AND ($2::timestamptz IS NULL OR paid_at < $2)
     ORDER BY paid_at DESC LIMIT $3`,
    [merchantId, before ?? null, limit],
  );
  return rows;
}

export interface ReceiptKeyRow {
  kid: string;
  private_ciphertext: string;
  public_jwk: Record<string, string>;
  created_at: Date;
  retired_at: Date | null;
}

export async function listReceiptKeys(q: Queryable): Promise<ReceiptKeyRow[]> {
  const { rows } = await q.query<ReceiptKeyRow>('SELECT * FROM mpp_receipt_keys ORDER BY created_at DESC');
  return rows;
}

/** Retires the active key (if any) and inserts a new active one, in the caller's transaction. */
export async function rotateReceiptKey(q: Queryable, k: { kid: string; privateCiphertext: string; publicJwk: object }): Promise<void> {
  await q.query('UPDATE mpp_receipt_keys SET retired_at = now() WHERE retired_at IS NULL');
  await q.query('INSERT INTO mpp_receipt_keys (kid, private_ciphertext, public_jwk) VALUES ($1, $2, $3::jsonb)', [k.kid, k.privateCiphertext, JSON.stringify(k.publicJwk)]);
}

/** Inserts the first key unless one is already active (two processes starting at once: one wins). */
export async function insertFirstReceiptKey(q: Queryable, k: { kid: string; privateCiphertext: string; publicJwk: object }): Promise<boolean> {
  const r = await q.query(`INSERT INTO mpp_receipt_keys (kid, private_ciphertext, public_jwk) VALUES ($1, $2, $3::jsonb) ON CONFLICT DO NOTHING`, [k.kid, k.privateCiphertext, JSON.stringify(k.publicJwk)]);
  return r.rowCount === 1;
}

/**
 * Deletes up to `limit` unpaid challenges that expired before `before` (nothing can pay them any
 * more); paid challenges are the merchant's records and stay. Returns how many were deleted.
 */
export async function pruneExpiredChallenges(q: Queryable, before: Date, limit = 1000): Promise<number> {
  const r = await q.query(
    `DELETE FROM mpp_challenges WHERE id IN (
       SELECT id FROM mpp_challenges WHERE status = 'OPEN' AND expires_at < $1 ORDER BY expires_at LIMIT $2)`,
    [before, limit],
  );
  return r.rowCount;
}
