// DELEGATE configuration: SETTLEMENT_KEY (the executor key), chains[].settlement_contract and
// chains[].tokens[].eip3009. The key must never show in an error, a JSON dump or console output.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { after, describe, it } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import type { RawKeySigner } from '../../src/signers/raw/index.ts';

const MASTER_KEY = 'ab'.repeat(32);
// anvil's public test account 7: never a real key
const KEY = '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356';
const EXECUTOR = privateKeyToAccount(KEY).address;
const SETTLEMENT = '0x8464135c8F25Da09e49BC8782676a84730C318bC';
const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
const USDT = '0xdAC17F958D2ee523a2206206994597C13D831ec7';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function chain(extra: Record<string, unknown> = {}, tokens?: unknown[]): Record<string, unknown> {
  return {
    chain_id: 31337,
    rpc_url: 'http://127.0.0.1:8545',
    confirmations: 1,
    finality_confirmations: 2,
    tokens: tokens ?? [
      { symbol: 'USDC', address: USDC, decimals: 6, eip3009: true },
      { symbol: 'USDT', address: USDT, decimals: 6 },
    ],
    ...extra,
  };
}

function load(chains: unknown[], env: Record<string, string> = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-settle-config-'));
  dirs.push(cwd);
  writeFileSync(join(cwd, 'tollgate.json'), JSON.stringify({ environment: 'production', chains }));
  return loadConfig({ TOLLGATE_CONFIG: 'tollgate.json', MASTER_KEY, ...env }, cwd);
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err;
  }
  assert.fail('expected a ConfigError');
}

describe('config: DELEGATE settlement', () => {
  it('reads eip3009 per token (absent = false) and the settlement contract (lowercase)', () => {
    const c = load([chain({ settlement_contract: SETTLEMENT })], { SETTLEMENT_KEY: KEY });
    assert.deepEqual(
      c.chains[0]!.tokens.map((t) => [t.symbol, t.eip3009 === true]),
      [
        ['USDC', true],
        ['USDT', false],
      ],
    );
    assert.equal(c.chains[0]!.settlementContract, SETTLEMENT.toLowerCase());
    assert.equal(c.settlement?.executorAddress, EXECUTOR);
    assert.equal(c.settlement?.mode, 'raw');
    assert.equal((c.settlement as RawKeySigner).privateKey(), KEY);
  });

  it('accepts the key without 0x and in upper case', () => {
    const c = load([chain()], { SETTLEMENT_KEY: KEY.slice(2).toUpperCase() });
    assert.equal(c.settlement?.executorAddress, EXECUTOR);
    assert.equal((c.settlement as RawKeySigner).privateKey(), KEY);
  });

  it('leaves DELEGATE off without SETTLEMENT_KEY and without a contract', () => {
    const c = load([chain()]);
    assert.equal(c.settlement, undefined);
    assert.equal(c.chains[0]!.settlementContract, undefined);
  });

  it('refuses a settlement contract without SETTLEMENT_KEY, naming both keys', () => {
    const err = configError(() => load([chain({ settlement_contract: SETTLEMENT })]));
    assert.equal(err.key, 'SETTLEMENT_KEY');
    assert.match(err.message, /chains\.0\.settlement_contract/);
  });

  it('refuses a malformed settlement contract and a non-boolean eip3009', () => {
    assert.equal(configError(() => load([chain({ settlement_contract: '0x1234' })], { SETTLEMENT_KEY: KEY })).key, 'chains.0.settlement_contract');
    const bad = configError(() => load([chain({}, [{ symbol: 'USDC', address: USDC, decimals: 6, eip3009: 'yes' }])]));
    assert.equal(bad.key, 'chains.0.tokens.0.eip3009');
  });

  it('refuses a malformed or unusable key without quoting it', () => {
    for (const bad of ['0x1234', KEY + 'ff', 'zz' + KEY.slice(4), '0x' + '00'.repeat(32), '0x' + 'ff'.repeat(32)]) {
      const err = configError(() => load([chain()], { SETTLEMENT_KEY: bad }));
      assert.equal(err.key, 'SETTLEMENT_KEY', bad);
      assert.equal(err.message.includes(bad.replace(/^0x/, '').slice(0, 16)), false, `the key leaked into: ${err.message}`);
    }
  });

  it('never prints the key: JSON, inspect, string conversion', () => {
    const c = load([chain({ settlement_contract: SETTLEMENT })], { SETTLEMENT_KEY: KEY });
    const raw = KEY.slice(2);
    const json = JSON.stringify(c, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
    for (const dump of [json, inspect(c, { depth: 10, showHidden: true }), String(c.settlement), `${inspect(c.settlement)}`]) {
      assert.equal(dump.toLowerCase().includes(raw), false, `key in ${dump.slice(0, 200)}`);
    }
    assert.match(JSON.stringify(c.settlement), /"key":"\[redacted\]"/);
    assert.match(json, new RegExp(EXECUTOR));
  });
});
