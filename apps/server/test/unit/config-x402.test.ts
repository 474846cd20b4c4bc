// The x402 facilitator's allowlist for facilitating for others: the file's `x402.facilitate_for`
// and the environment's X402_FACILITATE_FOR (which wins), lowercase; absent = merchants only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load.ts';

const MASTER_KEY = 'ab'.repeat(32);
const A = '0x8464135c8F25Da09e49BC8782676a84730C318bC';
const B = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function load(file: Record<string, unknown>, env: Record<string, string> = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-x402-config-'));
  dirs.push(cwd);
  writeFileSync(join(cwd, 'tollgate.json'), JSON.stringify({ environment: 'production', chains: [], ...file }));
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

describe('config: x402 facilitation allowlist', () => {
  it('absent or empty: merchants only (no list)', () => {
    assert.equal(load({}).x402FacilitateFor, undefined);
    assert.equal(load({ x402: { facilitate_for: [] } }).x402FacilitateFor, undefined);
  });

  it('reads the file key and the variable (which wins), lowercase, "*" kept', () => {
    assert.deepEqual(load({ x402: { facilitate_for: [A, '*'] } }).x402FacilitateFor, [A.toLowerCase(), '*']);
    assert.deepEqual(load({ x402: { facilitate_for: [A] } }, { X402_FACILITATE_FOR: ` ${B} , ${A}` }).x402FacilitateFor, [B.toLowerCase(), A.toLowerCase()]);
    assert.deepEqual(load({}, { X402_FACILITATE_FOR: '*' }).x402FacilitateFor, ['*']);
  });

  it('refuses what is not an address or "*", naming the key', () => {
    assert.equal(configError(() => load({ x402: { facilitate_for: ['0x1234'] } })).key, 'x402.facilitate_for.0');
    assert.equal(configError(() => load({ x402: { facilitate_for: [A], other: 1 } })).key, 'x402.other');
    assert.equal(configError(() => load({}, { X402_FACILITATE_FOR: `${A},everyone` })).key, 'X402_FACILITATE_FOR');
  });
});
