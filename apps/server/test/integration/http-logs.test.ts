// What the gateway logs: at trace level, with every kind of secret in play, no line (nor a Buffer
// logged inside one) carries a signature, an admin token, an API secret or a checkout id.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { signedHeaders } from '@tollgate/protocol';
import { startTollgate, type Tollgate } from '../../src/main.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { buildConfig, fakeChain, TEST_ADMIN_TOKEN, TestClock } from '../helpers/server.ts';

describe('logs never contain secrets', () => {
  const lines: string[] = [];
  let tg: Tollgate;
  let database: TestDatabase;
  const clock = new TestClock();
  const secrets: string[] = [];

  /** The log text plus any Buffer logged as `{ type: 'Buffer', data }`, decoded. */
  function haystack(): string {
    const decoded: string[] = [];
    const visit = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(visit);
      else if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        if (o.type === 'Buffer' && Array.isArray(o.data)) decoded.push(Buffer.from(o.data as number[]).toString('latin1'));
        Object.values(o).forEach(visit);
      }
    };
    for (const l of lines) visit(JSON.parse(l));
    return lines.join('') + decoded.join('\n');
  }

  before(async () => {
    database = await openTestDatabase('pglite');
    const stream = new Writable({
      write(chunk, _enc, cb) {
        for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(l);
        cb();
      },
    });
    tg = await startTollgate(buildConfig({ chains: [fakeChain()], logLevel: 'info' }), {
      db: database.db,
      clock,
      http: { logger: { level: 'trace', stream } },
    });
  });
  after(async () => {
    await tg.close();
    await database.drop();
  });

  it('X-Sign, admin tokens, API secrets and cs_ ids stay out of every line, at trace level', async () => {
    const url = tg.url!;
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) => fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

    // The admin token, used successfully and unsuccessfully.
    secrets.push(TEST_ADMIN_TOKEN);
    const created = await post('/admin/v1/merchants', { name: 'Log test', merchant_id: 'log_merchant' }, { authorization: `Bearer ${TEST_ADMIN_TOKEN}` });
    assert.equal(created.status, 201);
    const m = (await created.json()) as { api_key: string; api_secret: string };
    secrets.push(m.api_secret);
    const wrongToken = 'wrong-admin-token-SENTINEL-7f3a';
    secrets.push(wrongToken);
    assert.equal((await fetch(url + '/admin/v1/merchants/log_merchant', { headers: { authorization: `Bearer ${wrongToken}` } })).status, 401);
    const key = await fetch(url + '/admin/v1/merchants/log_merchant/api-keys', { method: 'POST', headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    const k2 = (await key.json()) as { api_secret: string };
    secrets.push(k2.api_secret);

    // Signed merchant requests: accepted, and refused for a bad signature.
    const h = signedHeaders({ apiKey: m.api_key, apiSecret: m.api_secret, query: { q: '1' }, now: () => clock.now() });
    secrets.push(h['X-Sign']);
    assert.equal((await fetch(url + '/api/v1/merchant?q=1', { headers: h })).status, 200);
    const forged = 'f'.repeat(64);
    secrets.push(forged);
    const h2 = signedHeaders({ apiKey: m.api_key, apiSecret: m.api_secret, now: () => clock.now() });
    assert.equal((await fetch(url + '/api/v1/merchant', { headers: { ...h2, 'X-Sign': forged } })).status, 401);

    // Checkout-session ids in paths and queries.
    secrets.push('cs_LogSecretSessionOne', 'cs_LogSecretSessionTwo', 'cs_LogSecretSessionThree');
    await fetch(url + '/checkout/v1/sessions/cs_LogSecretSessionOne');
    await fetch(url + '/checkout/v1/sessions/cs_LogSecretSessionOne/bind', { method: 'POST' });
    await fetch(url + '/merchants/log_merchant?checkout_id=cs_LogSecretSessionTwo');
    await fetch(url + '/merchants/cs_LogSecretSessionThree');

    // A request node's HTTP parser rejects: its raw bytes (headers included) reach the error object.
    const rawSign = 'a'.repeat(63) + 'b';
    secrets.push(rawSign);
    await new Promise<void>((resolve, reject) => {
      const u = new URL(url);
      const s = connect(Number(u.port), u.hostname, () => {
        s.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ADMIN_TOKEN}\r\nX-Sign: ${rawSign}\r\nBad Header Line\r\n\r\n`);
      });
      s.on('data', () => {});
      s.on('error', reject);
      s.on('close', () => resolve());
    });
    await new Promise((r) => setTimeout(r, 50));

    assert.ok(lines.length > 10, `expected request logs, got ${lines.length} lines`);
    for (const l of lines) JSON.parse(l); // one JSON object per line
    const incoming = lines.filter((l) => l.includes('"incoming request"'));
    assert.ok(
      incoming.some((l) => l.includes('/checkout/v1/sessions/cs_[redacted]')),
      'the redacted path is logged',
    );
    // Query values are redacted, names kept (issue 12: `?token=<admin token>` was logged verbatim).
    assert.ok(
      incoming.some((l) => l.includes('/api/v1/merchant?q=[redacted]')),
      'paths are logged with query names only',
    );
    assert.ok(
      lines.some((l) => l.includes('"client error"')),
      'the parser error was logged (trace)',
    );

    const text = haystack();
    for (const s of secrets) {
      assert.ok(s.length >= 16, `sentinel too short to be meaningful: ${s}`);
      const where = lines.filter((l) => l.includes(s)).map((l) => l.slice(0, 300));
      assert.equal(text.includes(s), false, `a log line contains the secret ${s.slice(0, 12)}…: ${where.join('\n') || '(in a logged Buffer)'}`);
    }
    assert.equal(/cs_(?!\[redacted\])[A-Za-z0-9]/.test(text), false, 'an unredacted cs_ id was logged');
  });
});
