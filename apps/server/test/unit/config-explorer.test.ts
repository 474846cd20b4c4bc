// chains[].explorer_url and the known-chain names/explorers (the hosted page names the network and
// links the payer's transaction). Kept apart from config.test.ts so the two evolve independently.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { CHAIN_PRESETS, KNOWN_CHAINS } from '../../src/config/presets.ts';

const MASTER_KEY = 'ab'.repeat(32);
const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function load(chain: Record<string, unknown>) {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-explorer-'));
  dirs.push(cwd);
  const doc = { environment: 'test', chains: [{ rpc_url: 'http://127.0.0.1:8545', confirmations: 1, finality_confirmations: 2, tokens: [{ symbol: 'USDC', address: USDC, decimals: 6 }], ...chain }] };
  writeFileSync(join(cwd, 'tollgate.json'), JSON.stringify(doc));
  return loadConfig({ TOLLGATE_CONFIG: 'tollgate.json', MASTER_KEY }, cwd).chains[0]!;
}

describe('config: chains[].explorer_url', () => {
  it('is taken from the file, without trailing slashes', () => {
    assert.equal(load({ chain_id: 31337, explorer_url: 'https://explorer.example/chain/7//' }).explorerUrl, 'https://explorer.example/chain/7');
  });

  it('a known chain gets its name and explorer when the file names none; the file wins', () => {
    const base = load({ chain_id: 84532 });
    assert.deepEqual([base.name, base.explorerUrl], ['Base Sepolia', 'https://sepolia.basescan.org']);
    const own = load({ chain_id: 84532, name: 'Staging', explorer_url: 'https://blockscout.example' });
    assert.deepEqual([own.name, own.explorerUrl], ['Staging', 'https://blockscout.example']);
    // A chain with a confirmation preset keeps the preset's name; the explorer comes from the list.
    const polygon = load({ chain_id: 137 });
    assert.deepEqual([polygon.name, polygon.explorerUrl], [CHAIN_PRESETS[137]!.name, 'https://polygonscan.com']);
  });

  it('an unknown chain has no explorer and is named "Chain <id>"', () => {
    const c = load({ chain_id: 999_999 });
    assert.equal(c.explorerUrl, undefined);
    assert.equal('explorerUrl' in c, false);
    assert.equal(c.name, 'Chain 999999');
  });

  it('knowing a chain does not invent its confirmation depths', () => {
    assert.equal(CHAIN_PRESETS[84532], undefined);
    assert.throws(
      () => load({ chain_id: 84532, confirmations: undefined }),
      (e) => e instanceof ConfigError && e.key === 'chains.0.confirmations',
    );
  });

  it('refuses what is not an http(s) URL or carries a query or fragment', () => {
    for (const bad of ['javascript:alert(1)', 'ftp://x.example', 'https://x.example/?tx=', 'https://x.example/#a', 'https://x .example', '']) {
      assert.throws(
        () => load({ chain_id: 1, explorer_url: bad }),
        (e) => e instanceof ConfigError && e.key === 'chains.0.explorer_url',
        bad,
      );
    }
  });

  it('every known explorer is https with no path, so `<url>/tx/<hash>` is its transaction page', () => {
    for (const [id, k] of Object.entries(KNOWN_CHAINS)) {
      const u = new URL(k.explorer_url);
      assert.equal(u.protocol, 'https:', id);
      assert.equal(u.pathname, '/', id);
      assert.equal(k.explorer_url, u.origin, id);
    }
  });
});
