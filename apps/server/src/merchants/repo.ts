import type { Queryable } from '../db/database.ts';

/** Row shapes and SQL of the merchants folder; no business rules here. */
export interface MerchantRow {
  id: string;
  name: string;
  receive_type: 'DIRECT' | 'DELEGATE';
  logo_url: string | null;
  return_urls: string[];
  card_enabled: boolean;
  /** Under-payment tolerance, basis points of the order amount (0–1000; docs/attribution.md). */
  underpay_tolerance_bps: number;
  created_at: Date;
}

export interface WalletRow {
  merchant_id: string;
  chain_id: number;
  token_symbol: string;
  address: string;
}

export async function insertMerchant(q: Queryable, m: { id: string; name: string; receiveType: string; logoUrl?: string | undefined; returnUrls: string[] }): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO merchants (id, name, receive_type, logo_url, return_urls) VALUES ($1, $2, $3, $4, $5::jsonb)
     ON CONFLICT (id) DO NOTHING`,
    [m.id, m.name, m.receiveType, m.logoUrl ?? null, JSON.stringify(m.returnUrls)],
  );
  return r.rowCount === 1;
}

export async function getMerchant(q: Queryable, id: string): Promise<MerchantRow | undefined> {
  const { rows } = await q.query<MerchantRow>('SELECT * FROM merchants WHERE id = $1', [id]);
  return rows[0];
}

export async function listWallets(q: Queryable, merchantId: string): Promise<WalletRow[]> {
  const { rows } = await q.query<WalletRow>('SELECT merchant_id, chain_id, token_symbol, address FROM merchant_wallets WHERE merchant_id = $1 ORDER BY chain_id, token_symbol', [merchantId]);
  return rows;
}

/** Adds or replaces the receiving address for one (chain, token) of a merchant. */
export async function upsertWallet(q: Queryable, w: WalletRow): Promise<void> {
  await q.query(
    `INSERT INTO merchant_wallets (merchant_id, chain_id, token_symbol, address) VALUES ($1, $2, $3, $4)
     ON CONFLICT (merchant_id, chain_id, token_symbol) DO UPDATE SET address = EXCLUDED.address`,
    [w.merchant_id, w.chain_id, w.token_symbol, w.address],
  );
}

export interface ApiKeyRow {
  api_key: string;
  merchant_id: string;
  secret_ciphertext: string;
  created_at: Date;
  revoked_at: Date | null;
  receive_type: 'DIRECT' | 'DELEGATE';
}

export async function findApiKey(q: Queryable, apiKey: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await q.query<ApiKeyRow>(`SELECT k.*, m.receive_type FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.api_key = $1`, [apiKey], { name: 'api_key_find' });
  return rows[0];
}

export async function listApiKeys(q: Queryable, merchantId: string): Promise<ApiKeyRow[]> {
  const { rows } = await q.query<ApiKeyRow>(`SELECT k.*, m.receive_type FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.merchant_id = $1 ORDER BY k.created_at`, [merchantId]);
  return rows;
}

export async function insertApiKey(q: Queryable, k: { apiKey: string; merchantId: string; ciphertext: string }): Promise<void> {
  await q.query('INSERT INTO api_keys (api_key, merchant_id, secret_ciphertext) VALUES ($1, $2, $3)', [k.apiKey, k.merchantId, k.ciphertext]);
}

/** Revokes a key (idempotent); false when the merchant has no such key. */
export async function revokeApiKey(q: Queryable, merchantId: string, apiKey: string): Promise<boolean> {
  const r = await q.query('UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE merchant_id = $1 AND api_key = $2', [merchantId, apiKey]);
  return r.rowCount === 1;
}

/** Turns the card rail on or off; the updated row, or undefined for an unknown merchant. */
export async function setCardEnabled(q: Queryable, id: string, enabled: boolean): Promise<MerchantRow | undefined> {
  const { rows } = await q.query<MerchantRow>('UPDATE merchants SET card_enabled = $2 WHERE id = $1 RETURNING *', [id, enabled]);
  return rows[0];
}

/** Replaces the return-URL allowlist; the updated row, or undefined for an unknown merchant. */
export async function setReturnUrls(q: Queryable, id: string, urls: string[]): Promise<MerchantRow | undefined> {
  const { rows } = await q.query<MerchantRow>('UPDATE merchants SET return_urls = $2::jsonb WHERE id = $1 RETURNING *', [id, JSON.stringify(urls)]);
  return rows[0];
}

/** Sets the under-payment tolerance; the updated row, or undefined for an unknown merchant. */
export async function setUnderpayTolerance(q: Queryable, id: string, bps: number): Promise<MerchantRow | undefined> {
  const { rows } = await q.query<MerchantRow>('UPDATE merchants SET underpay_tolerance_bps = $2 WHERE id = $1 RETURNING *', [id, bps]);
  return rows[0];
}

/** Locks the merchant row: serializes key creation so the two-active-keys limit holds under races. */
export async function lockMerchant(q: Queryable, id: string): Promise<boolean> {
  const r = await q.query('SELECT id FROM merchants WHERE id = $1 FOR UPDATE', [id]);
  return r.rowCount === 1;
}

export async function countActiveKeys(q: Queryable, merchantId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE merchant_id = $1 AND revoked_at IS NULL', [merchantId]);
  return rows[0]?.n ?? 0;
}

/**
 * Records a batch of (api_key, nonce) pairs in one statement; returns the pairs recorded. A pair is
 * not recorded when it was used before (a replay) or its key is revoked — revocation is checked
 * here, in the same statement that consumes the nonce, so a key revoked by any process is refused
 * at once even where its secret is cached. Rows go in sorted order: two batches that share pairs
 * (a replay racing its original) then lock them in the same order and cannot deadlock. The batch
 * is one jsonb parameter, not arrays: with arrays the planner sees each batch's length and re-plans
 * the prepared statement every time instead of reusing its generic plan (see orders/repo.ts).
 * Pairs must be distinct (the caller dedupes).
 */
export async function insertNonces(q: Queryable, pairs: readonly { apiKey: string; nonce: string }[]): Promise<{ api_key: string; nonce: string }[]> {
  const { rows } = await q.query<{ api_key: string; nonce: string }>(
    `INSERT INTO request_nonces (api_key, nonce)
     SELECT u.api_key, u.nonce FROM jsonb_to_recordset($1::jsonb) AS u(api_key text, nonce text)
     JOIN api_keys k ON k.api_key = u.api_key AND k.revoked_at IS NULL
     ORDER BY u.api_key, u.nonce
     ON CONFLICT DO NOTHING
     RETURNING api_key, nonce`,
    [JSON.stringify(pairs.map((p) => ({ api_key: p.apiKey, nonce: p.nonce })))],
    { name: 'nonces_insert_batch' },
  );
  return rows;
}

/** The keys among `apiKeys` that are revoked. */
export async function revokedKeys(q: Queryable, apiKeys: readonly string[]): Promise<Set<string>> {
  const { rows } = await q.query<{ api_key: string }>('SELECT api_key FROM api_keys WHERE api_key = ANY($1::text[]) AND revoked_at IS NOT NULL', [apiKeys]);
  return new Set(rows.map((r) => r.api_key));
}

/** Deletes nonces older than the given age; the timestamp window already refuses their requests. */
export async function pruneNonces(q: Queryable, olderThanSeconds: number): Promise<number> {
  const r = await q.query(`DELETE FROM request_nonces WHERE seen_at < now() - make_interval(secs => $1)`, [olderThanSeconds]);
  return r.rowCount;
}
