import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { startTollgate } from '../../src/main.ts';
import { createCardProcessor } from '../../src/rails/card/registry.ts';
import { openTestDatabase } from '../helpers/db.ts';
import { buildConfig, fakeChain, TestClock, TestServer, type Creds } from '../helpers/server.ts';
import { CARD, createCardSession, payCard, setupCardMerchant, startCard } from './card-fixtures.ts';

/**
 * What the card rail refuses: the TEST processor in production (at config load and in code), a
 * Stripe configuration without its secrets; and what it never writes: card numbers in any log line.
 */
describe('card rail: configuration', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const load = (doc: object, env: Record<string, string> = {}) => {
    const cwd = mkdtempSync(join(tmpdir(), 'tg-card-config-'));
    dirs.push(cwd);
    writeFileSync(join(cwd, 'tollgate.json'), JSON.stringify(doc));
    return loadConfig({ TOLLGATE_CONFIG: 'tollgate.json', MASTER_KEY: 'ab'.repeat(32), ...env }, cwd);
  };

  it('refuses the TEST processor in production, at load and in code', async () => {
    assert.throws(
      () => load({ environment: 'production', chains: [], card: { processor: 'TEST' } }),
      (e: unknown) => e instanceof ConfigError && e.key === 'card.processor',
    );
    await assert.rejects(createCardProcessor({ environment: 'production', card: { processor: 'TEST' } }), /refused in production/);
    // No card section: TEST in the test environment, nothing in production.
    assert.equal((await createCardProcessor({ environment: 'test' }))?.name, 'TEST');
    assert.equal(await createCardProcessor({ environment: 'production' }), undefined);
    assert.equal(load({ environment: 'test', chains: [], card: { processor: 'TEST' } }).card?.processor, 'TEST');
  });

  it('STRIPE needs both secrets from the environment, and never prints them', () => {
    assert.throws(
      () => load({ environment: 'production', chains: [], card: { processor: 'STRIPE' } }),
      (e: unknown) => e instanceof ConfigError && e.key === 'STRIPE_SECRET_KEY',
    );
    assert.throws(
      () => load({ environment: 'production', chains: [], card: { processor: 'STRIPE' } }, { STRIPE_SECRET_KEY: 'sk_test_abc' }),
      (e: unknown) => e instanceof ConfigError && e.key === 'STRIPE_WEBHOOK_SECRET',
    );
    const c = load({ environment: 'production', chains: [], card: { processor: 'STRIPE', stripe_api: { host: '127.0.0.1', port: 12111, protocol: 'http' } } }, { STRIPE_SECRET_KEY: 'sk_test_SECRETKEY123', STRIPE_WEBHOOK_SECRET: 'whsec_SECRETHOOK456' });
    assert.equal(c.card?.processor, 'STRIPE');
    for (const text of [JSON.stringify(c.card), inspect(c, { depth: 5 }), String(c.card && 'stripe' in c.card ? c.card.stripe : '')]) {
      assert.ok(!text.includes('SECRETKEY123') && !text.includes('SECRETHOOK456'), text);
    }
  });
});

describe('card rail: card numbers never reach a log line (TEST processor, trace logging)', () => {
  const lines: string[] = [];
  let s: TestServer;
  let m: Creds;
  before(async () => {
    const database = await openTestDatabase('pglite');
    const stream = new Writable({
      write(chunk, _enc, cb) {
        for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(l);
        cb();
      },
    });
    const clock = new TestClock();
    const tg = await startTollgate(buildConfig({ chains: [fakeChain()] }), { db: database.db, clock, http: { rateLimits: false, logger: { level: 'trace', stream } } });
    s = new TestServer(tg, database, clock);
    m = await setupCardMerchant(s);
  });
  after(() => s.close());

  it('success, decline, invalid and malformed requests: no card number, no CVC in the log', async () => {
    const numbers = [CARD.decline, CARD.success, '4242 4242 4242 4241', CARD.duplicate];
    for (const n of numbers) {
      const { checkout_id } = await createCardSession(s, m);
      await startCard(s, checkout_id);
      await payCard(s, checkout_id, n);
    }
    // A body refused by the schema (extra field) and one with a bad CVC still carry the number.
    const { checkout_id } = await createCardSession(s, m);
    await startCard(s, checkout_id);
    const extra = await s.request('POST', `/checkout/v1/sessions/${checkout_id}/card/test-payment`, { body: { number: '4000000000009995', exp_month: 12, exp_year: 2099, cvc: '123', note: 'x' } });
    assert.equal(extra.status, 400);
    const cvc = await s.request('POST', `/checkout/v1/sessions/${checkout_id}/card/test-payment`, { body: { number: '4000000000003253', exp_month: 12, exp_year: 2099, cvc: '98765' } });
    assert.equal(cvc.status, 400);
    const text = lines.join('\n');
    assert.ok(lines.length > 20, 'trace logging is on');
    for (const n of [...numbers, '4000000000009995', '4000000000003253']) {
      const digits = n.replace(/\s/g, '');
      assert.ok(!text.includes(digits) && !text.includes(n), `card number ${n.slice(-4)} was logged`);
      assert.ok(!text.includes(digits.slice(0, 12)), `a card number prefix was logged`);
    }
    assert.ok(!text.includes('98765'), 'the CVC was logged');
  });
});
