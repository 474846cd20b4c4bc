// Shared fixtures of the checkout integration tests (checkout-*.test.ts): a server whose rate
// limits the test chooses, session bodies from a builder, and small database probes.
import assert from 'node:assert/strict';
import type { ChainConfig, Config } from '../../src/config/schema.ts';
import type { HttpOptions } from '../../src/http/app.ts';
import { startTollgate } from '../../src/main.ts';
import { openTestDatabase, type Backend } from '../helpers/db.ts';
import { buildConfig, fakeChain, TestClock, TestServer, type Creds } from '../helpers/server.ts';

export const RETURN_BASE = 'https://shop.example/checkout/done';

/**
 * A running Tollgate like helpers/server.ts startTestServer, with HTTP options of the test's
 * choosing. By default rate limits are off: a table-driven file sends hundreds of public reads
 * from 127.0.0.1 in a minute, and the limits have their own test.
 */
export async function startCheckoutServer(backend: Backend, opts: { http?: HttpOptions; config?: Partial<Config>; chains?: ChainConfig[]; clock?: TestClock } = {}): Promise<TestServer> {
  const database = await openTestDatabase(backend);
  const clock = opts.clock ?? new TestClock();
  const config = buildConfig({ chains: opts.chains ?? [fakeChain()], ...opts.config });
  try {
    const tg = await startTollgate(config, { db: database.db, clock, http: { logger: false, rateLimits: false, ...opts.http } });
    return new TestServer(tg, database, clock);
  } catch (err) {
    await database.drop();
    throw err;
  }
}

let seq = 0;
/** A valid create body (crypto, price 9.99, line items adding up, metadata); `undefined` removes a field. */
export function buildSessionBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  seq++;
  const body: Record<string, unknown> = {
    checkout_type: 'DIRECT',
    price: '9.99',
    client_reference_id: `cart-${Date.now()}-${seq}`,
    line_items_json: JSON.stringify([
      { name: 'Tee', quantity: 1, amount: '7.99' },
      { name: 'Sticker', quantity: 2, amount: '1' },
    ]),
    public_metadata_json: JSON.stringify({ campaign: 'spring' }),
    private_metadata_json: JSON.stringify({ internal_customer: 'PRIVATE-SENTINEL-customer-42' }),
    ...overrides,
  };
  for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
  return body;
}

/** Creates a session through the merchant API and returns the 200 body. */
export async function createSession(s: TestServer, m: Creds, overrides: Record<string, unknown> = {}): Promise<{ checkout_id: string; checkout_type: string; url: string; expires_at: number }> {
  const r = await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: buildSessionBody(overrides) });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

export async function countRows(s: TestServer, table: 'checkout_sessions' | 'orders' | 'checkout_transitions'): Promise<number> {
  const { rows } = await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]!.n;
}

export async function sessionTransitions(s: TestServer, id: string): Promise<{ from_status: string | null; to_status: string; trigger: string }[]> {
  const { rows } = await s.db.query<{ from_status: string | null; to_status: string; trigger: string }>('SELECT from_status, to_status, trigger FROM checkout_transitions WHERE checkout_id = $1 ORDER BY id', [id]);
  return rows;
}

export async function sessionStatus(s: TestServer, id: string): Promise<string> {
  const { rows } = await s.db.query<{ status: string }>('SELECT status FROM checkout_sessions WHERE id = $1', [id]);
  return rows[0]!.status;
}

/** What the watcher records after scanning: chain time has reached `at` on `chainId`. */
export function setScannedChainTime(s: TestServer, at: Date, chainId = 31337) {
  return s.db.query(
    `INSERT INTO chain_cursors (chain_id, block_number, block_hash, block_timestamp) VALUES ($1, 1, '0x' || repeat('0', 64), $2)
     ON CONFLICT (chain_id) DO UPDATE SET block_timestamp = EXCLUDED.block_timestamp`,
    [chainId, at],
  );
}

/** What the watcher records when it matches a paying transfer (payment seen, not yet confirmed). */
export function markPaymentSeen(s: TestServer, orderId: string) {
  return s.db.query(`UPDATE orders SET transfer_id = 1, tx_hash = '0x' || repeat('b', 64), payment_seen_at = now() WHERE id = $1`, [orderId]);
}
