// TRUST_PROXY over real HTTP on loopback (docs/operations.md "Behind a reverse proxy"). The test
// client plays the reverse proxy: its socket address is 127.0.0.1 and it sends X-Forwarded-For the
// way nginx's $proxy_add_x_forwarded_for does (whatever the client sent, then the client's address).
// - trusted (the proxy's address, or 1 hop): clients with different forwarded addresses have their
//   own budget of every per-address limit, and an entry the client wrote itself changes nothing;
// - not trusted (the default): X-Forwarded-For is ignored, the limit is the socket address's;
// - an invalid TRUST_PROXY stops `tollgate serve` with one line naming the variable.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseTrustProxy } from '../../src/config/trust-proxy.ts';
import { MAX_ADDRESS_FAILURES } from '../../src/portal/auth.ts';
import { ROUTES } from '../../src/routes.ts';
import { startTollgate } from '../../src/main.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { buildConfig, TEST_ADMIN_TOKEN, TestClock, TestServer } from '../helpers/server.ts';

/** Every route with a per-address rate limit: checkout, quick-pay, x402, machine payments, public reads. */
const LIMITED = ROUTES.filter((r) => r.rateLimit);
const ONE_PER_MINUTE = { max: 1, timeWindowMs: 60_000 };

/** Documentation addresses (RFC 5737, RFC 3849); each server below has its own clients. */
const clientA = (k: number) => `203.0.113.${10 * k + 7}`;
const clientB = (k: number) => `203.0.113.${10 * k + 8}`;
const FORGED = ['198.51.100.1', '198.51.100.2', '198.51.100.3'];

/**
 * A Tollgate (API role) with `trust` as TRUST_PROXY on the file's shared database: the servers of
 * this file differ only in their HTTP layer, and one database start instead of three keeps it fast.
 * Their portal throttle rows meet in that database, hence distinct client addresses per server.
 */
async function start(database: TestDatabase, trust: string | undefined): Promise<TestServer> {
  const config = buildConfig(trust === undefined ? {} : { trustProxy: parseTrustProxy(trust, 'TRUST_PROXY') });
  const http = { logger: false, rateLimits: { public_read: ONE_PER_MINUTE, checkout_bind: ONE_PER_MINUTE, machine_payment: ONE_PER_MINUTE } };
  return new TestServer(await startTollgate(config, { db: database.db, role: 'api', http }), database, new TestClock());
}

/** One request to `route` (path parameters filled with an unknown id; a 400 or 404 counts like any answer). */
async function hit(s: TestServer, route: (typeof LIMITED)[number], xff?: string): Promise<Response> {
  const path = route.url.replace(/:[a-z_]+/g, 'unknown_1');
  const res = await fetch(s.url + path, {
    method: route.method,
    headers: { ...(xff ? { 'x-forwarded-for': xff } : {}), ...(route.method === 'GET' ? {} : { 'content-type': 'application/json' }) },
    ...(route.method === 'GET' ? {} : { body: '{}' }),
  });
  await res.arrayBuffer();
  return res;
}

const label = (r: (typeof LIMITED)[number]) => `${r.method} ${r.url}`;

function operatorLogin(s: TestServer, xff: string | undefined, token = 'wrong-admin-token') {
  return s.request('POST', '/portal/api/operator/login', { body: { admin_token: token }, ...(xff ? { headers: { 'x-forwarded-for': xff } } : {}) });
}
function emailLogin(s: TestServer, xff: string | undefined) {
  return s.request('POST', '/portal/api/login', { body: { email: 'nobody@example.com', password: 'wrong password' }, ...(xff ? { headers: { 'x-forwarded-for': xff } } : {}) });
}

/** Locks `xff`'s address out of portal sign-in: the failures allowed per address, all 401. */
async function lockOut(s: TestServer, xffs: (i: number) => string | undefined): Promise<void> {
  for (let i = 0; i < MAX_ADDRESS_FAILURES; i++) {
    const r = await operatorLogin(s, xffs(i));
    assert.equal(r.status, 401, `failure ${i + 1}: ${r.text}`);
  }
}

for (const backend of backends()) {
  describe(`TRUST_PROXY over loopback HTTP (${backend})`, () => {
    let database: TestDatabase;
    before(async () => {
      database = await openTestDatabase(backend);
    });
    after(() => database?.drop());

    // First: its portal lock is the socket address's (127.0.0.1), which no later server uses.
    describe('TRUST_PROXY unset: a forged X-Forwarded-For changes nothing', () => {
      let s: TestServer;
      before(async () => {
        s = await start(database, undefined);
      });
      after(() => s?.tg.close());

      it("every rate-limited route: the budget is the socket address's, whatever X-Forwarded-For says", async () => {
        for (const r of LIMITED) {
          const first = await hit(s, r, clientA(9));
          assert.notEqual(first.status, 429, label(r));
          assert.equal(first.headers.get('x-ratelimit-limit'), '1', `${label(r)} is limited`);
          assert.equal((await hit(s, r, clientB(9))).status, 429, label(r));
          assert.equal((await hit(s, r, `${FORGED[0]}, ${clientB(9)}`)).status, 429, label(r));
          assert.equal((await hit(s, r)).status, 429, label(r));
        }
      });

      it('portal sign-in: failures under ever-new forged addresses still lock the one real address', async () => {
        await lockOut(s, (i) => `198.51.100.${i + 10}`);
        assert.equal((await operatorLogin(s, clientB(9))).status, 429);
        assert.equal((await emailLogin(s, undefined)).status, 429);
      });
    });

    (['127.0.0.1', '1'] as const).forEach((trust, k) => {
      const [A, B] = [clientA(k), clientB(k)];
      describe(`TRUST_PROXY=${trust}: the forwarded address is the client`, () => {
        let s: TestServer;
        before(async () => {
          s = await start(database, trust);
        });
        after(() => s?.tg.close());

        it('every rate-limited route: each forwarded client has its own budget; an entry written by the client is ignored', async () => {
          assert.ok(LIMITED.length >= 20, `rate-limited routes: ${LIMITED.length}`);
          for (const r of LIMITED) {
            const first = await hit(s, r, `${FORGED[0]}, ${A}`);
            assert.notEqual(first.status, 429, label(r));
            assert.equal(first.headers.get('x-ratelimit-limit'), '1', `${label(r)} is limited`);
            // the same client claiming another origin in front: still client A, over its budget
            assert.equal((await hit(s, r, `${FORGED[1]}, ${A}`)).status, 429, label(r));
            assert.notEqual((await hit(s, r, `${FORGED[0]}, ${B}`)).status, 429, `${label(r)}: client B is not limited by A`);
            // the proxy itself (no X-Forwarded-For) is one more client
            assert.notEqual((await hit(s, r)).status, 429, `${label(r)}: the proxy's own address`);
          }
        });

        it('portal sign-in: one forwarded address locked out does not lock out another', async () => {
          await lockOut(s, (i) => `${FORGED[i % FORGED.length]}, ${A}`);
          const locked = await operatorLogin(s, A);
          assert.equal(locked.status, 429, locked.text);
          assert.equal(locked.body.code, 'rate_limited');
          assert.equal((await emailLogin(s, `${FORGED[2]}, ${A}`)).status, 429, 'email sign-in shares the address lock');
          const other = await operatorLogin(s, B);
          assert.equal(other.status, 401, other.text);
          assert.equal((await emailLogin(s, B)).status, 401);
          assert.equal((await operatorLogin(s, B, TEST_ADMIN_TOKEN)).status, 200, 'the operator signs in from another address');
        });

        it('portal sign-in: IPv6 clients are counted per /64', async () => {
          await lockOut(s, () => `2001:db8:${k}:1::1`);
          assert.equal((await operatorLogin(s, `2001:db8:${k}:1::ffff`)).status, 429, 'another address of the same /64');
          assert.equal((await operatorLogin(s, `2001:db8:${k}:2::1`)).status, 401, 'another /64');
        });
      });
    });
  });
}

describe('an invalid TRUST_PROXY', () => {
  it('`tollgate serve` refuses to start: exit 78 and one line naming TRUST_PROXY', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-trust-'));
    let p: ReturnType<typeof spawnTollgate> | undefined;
    try {
      p = spawnTollgate(['serve'], { DATA_DIR: dataDir, MASTER_KEY: 'ab'.repeat(32), ADMIN_TOKEN: TEST_ADMIN_TOKEN, TRUST_PROXY: 'proxy.internal' });
      const child = p.child;
      // Bounded: a serve that ignored the variable would start the dev profile and keep running.
      const code = await new Promise<number | string | null>((resolve) => {
        child.once('close', resolve);
        setTimeout(() => resolve('still running after 45 s'), 45_000).unref();
      });
      assert.equal(code, 78, p.output());
      assert.equal(p.output().trim().split('\n').length, 1, p.output());
      assert.match(p.output(), /^invalid configuration: TRUST_PROXY: "proxy\.internal" is not an IP address or CIDR range; expected false, a hop count/);
    } finally {
      await p?.stop(); // SIGTERM: a dev profile that did start stops its anvil too
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
