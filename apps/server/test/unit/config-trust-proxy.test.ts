import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Fastify from 'fastify';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { parseTrustProxy } from '../../src/config/trust-proxy.ts';
import { fastifyTrustProxy } from '../../src/http/client-address.ts';

const MASTER_KEY = 'ab'.repeat(32);
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** loadConfig with a minimal config file holding `fileTrust` (when given) and `env` over it. */
function load(env: Record<string, string>, fileTrust?: unknown) {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-trust-'));
  dirs.push(cwd);
  writeFileSync(join(cwd, 'tollgate.json'), JSON.stringify({ environment: 'test', chains: [], ...(fileTrust !== undefined ? { trust_proxy: fileTrust } : {}) }));
  return loadConfig({ TOLLGATE_CONFIG: 'tollgate.json', MASTER_KEY, ...env }, cwd);
}

/** The ConfigError of `fn`, checked to name `key` on one line. */
function refusal(fn: () => unknown, key: string): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    assert.equal(err.key, key);
    assert.match(err.message, new RegExp(`^invalid configuration: ${key}: `));
    assert.ok(!err.message.includes('\n'), `one line: ${JSON.stringify(err.message)}`);
    return err;
  }
  assert.fail(`expected a ConfigError for ${key}`);
}

describe('TRUST_PROXY / trust_proxy', () => {
  it('accepts false, a hop count, and addresses, CIDR ranges and named ranges as a comma list', () => {
    assert.equal(parseTrustProxy(undefined, 'TRUST_PROXY'), false);
    assert.equal(parseTrustProxy('false', 'TRUST_PROXY'), false);
    assert.equal(parseTrustProxy('0', 'TRUST_PROXY'), false);
    assert.equal(parseTrustProxy('1', 'TRUST_PROXY'), 1);
    assert.equal(parseTrustProxy(' 2 ', 'TRUST_PROXY'), 2);
    assert.deepEqual(parseTrustProxy('127.0.0.1', 'TRUST_PROXY'), ['127.0.0.1']);
    assert.deepEqual(parseTrustProxy('127.0.0.1, 10.0.0.0/8,fd00::/8, ::1,loopback,uniquelocal', 'TRUST_PROXY'), ['127.0.0.1', '10.0.0.0/8', 'fd00::/8', '::1', 'loopback', 'uniquelocal']);
    // the file's JSON forms
    assert.equal(parseTrustProxy(false, 'trust_proxy'), false);
    assert.equal(parseTrustProxy(1, 'trust_proxy'), 1);
    assert.deepEqual(parseTrustProxy(['10.0.0.0/8', '172.16.0.0/12'], 'trust_proxy'), ['10.0.0.0/8', '172.16.0.0/12']);
  });

  it('every accepted value is one fastify takes as trustProxy (it compiles lists when the app is built)', () => {
    for (const v of ['false', '1', '3', '127.0.0.1', '10.0.0.0/8,fd00::/8,::1,loopback,linklocal,uniquelocal', '192.168.0.0/32', '10.0.0.0/1', '::ffff:10.0.0.1', '2001:db8::/32']) {
      assert.doesNotThrow(() => Fastify({ trustProxy: fastifyTrustProxy(parseTrustProxy(v, 'TRUST_PROXY')) }), v);
    }
  });

  it('refuses everything else with one line naming the key', () => {
    for (const bad of ['true', 'yes', 'localhost', '10.0.0.0/33', 'fd00::/129', '0.0.0.0/0', '::/0', '10.0.0.0/', '10.0.0.1/8/8', '1.2.3', '10.0.0.1,,10.0.0.2', ',', '-1', '1.5', '101', 'fe80::1%eth0', '10.0.0.1\n10.0.0.2']) {
      refusal(() => parseTrustProxy(bad, 'TRUST_PROXY'), 'TRUST_PROXY');
    }
    for (const bad of [true, -1, 1.5, {}, [1], ['10.0.0.1', 'nope'], []]) refusal(() => parseTrustProxy(bad, 'trust_proxy'), 'trust_proxy');
    // `true` says why: the leftmost X-Forwarded-For entry is the client's own words
    assert.match(refusal(() => parseTrustProxy('true', 'TRUST_PROXY'), 'TRUST_PROXY').message, /any client/);
    assert.match(refusal(() => parseTrustProxy('10.0.0.0/33', 'TRUST_PROXY'), 'TRUST_PROXY').message, /"10\.0\.0\.0\/33" has an invalid prefix length \(1-32\)/);
  });

  it('loadConfig: absent is false; TRUST_PROXY wins over the file; an invalid value stops start-up naming the key', () => {
    assert.equal(load({}).trustProxy, false);
    assert.deepEqual(load({}, ['10.0.0.0/8']).trustProxy, ['10.0.0.0/8']);
    assert.equal(load({ TRUST_PROXY: '1' }, ['10.0.0.0/8']).trustProxy, 1);
    assert.equal(load({ TRUST_PROXY: 'false' }, 2).trustProxy, false);
    assert.deepEqual(load({ TRUST_PROXY: '127.0.0.1' }).trustProxy, ['127.0.0.1']);
    refusal(() => load({ TRUST_PROXY: 'proxy.internal' }), 'TRUST_PROXY');
    refusal(() => load({}, 'true'), 'trust_proxy');
  });
});
