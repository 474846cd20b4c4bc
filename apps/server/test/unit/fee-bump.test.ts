// The fee arithmetic of replacing a stuck executor transaction (settlement/fee-bump.ts) and the
// `chains[].fee_bump` configuration. The replacement on a real chain: integration/settlement-fee-bump.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { DEFAULT_FEE_BUMP } from '../../src/config/schema.ts';
import { bumpFees } from '../../src/settlement/fee-bump.ts';

const GWEI = 1_000_000_000n;
const cfg = (over: Partial<typeof DEFAULT_FEE_BUMP> = {}) => ({ ...DEFAULT_FEE_BUMP, ...over });

describe('bumpFees', () => {
  it('raises both caps by the percent, rounded up, when the node estimates less', () => {
    const p = bumpFees({ maxFeePerGas: 10n * GWEI + 1n, maxPriorityFeePerGas: 3n }, { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }, cfg({ bumpPercent: 10 }));
    assert.deepEqual(p, { kind: 'bump', fees: { maxFeePerGas: 11n * GWEI + 2n, maxPriorityFeePerGas: 4n } });
  });

  it('follows the node estimate when the base fee rose past the raise', () => {
    const p = bumpFees({ maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: GWEI }, { maxFeePerGas: 40n * GWEI, maxPriorityFeePerGas: 2n * GWEI }, cfg());
    assert.deepEqual(p, { kind: 'bump', fees: { maxFeePerGas: 40n * GWEI, maxPriorityFeePerGas: 2n * GWEI } });
  });

  it('clips at the cap when the minimum raise fits under it, refuses when it does not', () => {
    const old = { maxFeePerGas: 100n * GWEI, maxPriorityFeePerGas: GWEI };
    const now = { maxFeePerGas: 300n * GWEI, maxPriorityFeePerGas: GWEI };
    assert.deepEqual(bumpFees(old, now, cfg({ maxFeePerGas: 200n * GWEI })), { kind: 'bump', fees: { maxFeePerGas: 200n * GWEI, maxPriorityFeePerGas: (115n * GWEI) / 100n } });
    const capped = bumpFees(old, now, cfg({ maxFeePerGas: 114n * GWEI }));
    assert.equal(capped.kind, 'capped');
    assert.equal(capped.kind === 'capped' && capped.cap, 114n * GWEI);
  });

  it('property: a bump is ≥ +percent on both caps, tip ≤ max fee, max fee ≤ cap', () => {
    const wei = fc.bigInt({ min: 1n, max: 10n ** 13n });
    fc.assert(
      fc.property(wei, wei, wei, wei, fc.integer({ min: 10, max: 200 }), fc.bigInt({ min: 1n, max: 10n ** 14n }), (oldMax, oldTip, nowMax, nowTip, percent, cap) => {
        const old = { maxFeePerGas: oldMax, maxPriorityFeePerGas: oldTip <= oldMax ? oldTip : oldMax };
        const p = bumpFees(old, { maxFeePerGas: nowMax, maxPriorityFeePerGas: nowTip }, { afterMs: 1, bumpPercent: percent, maxFeePerGas: cap });
        if (p.kind === 'capped') {
          const minMax = (old.maxFeePerGas * BigInt(100 + percent) + 99n) / 100n;
          const minTip = (old.maxPriorityFeePerGas * BigInt(100 + percent) + 99n) / 100n;
          assert.ok(minMax > cap || minTip > cap);
          return;
        }
        assert.ok(p.fees.maxFeePerGas * 100n >= old.maxFeePerGas * BigInt(100 + percent));
        assert.ok(p.fees.maxPriorityFeePerGas * 100n >= old.maxPriorityFeePerGas * BigInt(100 + percent));
        assert.ok(p.fees.maxPriorityFeePerGas <= p.fees.maxFeePerGas);
        assert.ok(p.fees.maxFeePerGas <= cap);
      }),
    );
  });
});

describe('chains[].fee_bump', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const load = (feeBump: unknown) => {
    const cwd = mkdtempSync(join(tmpdir(), 'tollgate-feebump-'));
    dirs.push(cwd);
    const chain = {
      chain_id: 31337,
      rpc_url: 'http://127.0.0.1:8545',
      confirmations: 1,
      finality_confirmations: 2,
      tokens: [{ symbol: 'USDC', address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: 6 }],
      ...(feeBump === undefined ? {} : { fee_bump: feeBump }),
    };
    writeFileSync(join(cwd, 'tollgate.json'), JSON.stringify({ environment: 'production', chains: [chain] }));
    return loadConfig({ TOLLGATE_CONFIG: 'tollgate.json', MASTER_KEY: 'ab'.repeat(32) }, cwd).chains[0] as { feeBump?: unknown };
  };

  it('absent: the executor defaults apply; present: parsed, defaults for the fields left out', () => {
    assert.equal(load(undefined).feeBump, undefined);
    assert.deepEqual(load({ after_seconds: 30, max_fee_per_gas: '80000000000' }).feeBump, { afterMs: 30_000, bumpPercent: 15, maxFeePerGas: 80n * GWEI });
  });

  it('refuses a raise under 10 %, a zero delay, a decimal or negative cap, unknown keys', () => {
    for (const bad of [{ bump_percent: 9 }, { after_seconds: 0 }, { max_fee_per_gas: '1.5' }, { max_fee_per_gas: '-1' }, { max_fee_per_gas: 5 }, { after_blocks: 3 }]) {
      assert.throws(
        () => load(bad),
        (e: unknown) => e instanceof ConfigError && /fee_bump/.test(e.key),
        JSON.stringify(bad),
      );
    }
  });
});
