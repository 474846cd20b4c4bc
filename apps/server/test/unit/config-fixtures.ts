// Shared fixtures of the loadConfig unit tests (config.test.ts, config-presets.test.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { ConfigError } from '../../src/config/load.ts';

export const MASTER_KEY = 'ab'.repeat(32);
export const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
export const USDT = '0xdAC17F958D2ee523a2206206994597C13D831ec7';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh temporary working directory. */
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'tollgate-config-'));
  dirs.push(d);
  return d;
}

/** A valid config file document; `overrides` replace top-level keys. */
export function buildFile(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    environment: 'test',
    public_base_url: 'http://127.0.0.1:8402',
    order_ttl_seconds: 600,
    fees: { per_order: '0.01' },
    chains: [
      {
        chain_id: 31337,
        name: 'Local',
        rpc_url: 'http://127.0.0.1:8545',
        confirmations: 1,
        finality_confirmations: 2,
        poll_interval_ms: 200,
        tokens: [{ symbol: 'USDC', address: USDC, decimals: 6 }],
      },
    ],
    ...overrides,
  };
}

/** Writes `doc` (an object, or raw text) as the config file of a fresh directory. */
export function withFile(doc: unknown, env: Record<string, string> = {}): { env: Record<string, string>; cwd: string } {
  const cwd = tempDir();
  writeFileSync(join(cwd, 'tollgate.json'), typeof doc === 'string' ? doc : JSON.stringify(doc));
  return { cwd, env: { TOLLGATE_CONFIG: 'tollgate.json', MASTER_KEY, ...env } };
}

/** Asserts loadConfig fails with a ConfigError for `key`, and that the message names it. */
export function assertConfigError(fn: () => unknown, key: string, detail?: RegExp): ConfigError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ConfigError, `expected a ConfigError for ${key}, got ${String(caught)}`);
  assert.equal(caught.key, key, caught.message);
  assert.ok(caught.message.includes(key), `message must name ${key}: ${caught.message}`);
  if (detail) assert.match(caught.message, detail);
  return caught;
}
