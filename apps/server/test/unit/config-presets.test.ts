import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getAddress } from 'viem';
import { loadConfig } from '../../src/config/load.ts';
import { CHAIN_PRESETS, PRESET_IDS } from '../../src/config/presets.ts';
import { assertConfigError, buildFile, USDC, withFile } from './config-fixtures.ts';

describe('loadConfig: chain presets', () => {
  const chain = (over: Record<string, unknown>) => ({
    rpc_url: 'https://rpc.example.com',
    tokens: [{ symbol: 'USDC', address: USDC, decimals: 6 }],
    ...over,
  });

  for (const id of [1, 137, 42161, 56, 1088, 2345]) {
    it(`chain ${id} takes confirmations, finality, name and poll interval from its preset`, () => {
      const { cwd, env } = withFile(buildFile({ chains: [chain({ chain_id: id })] }));
      const c = loadConfig(env, cwd).chains[0]!;
      const preset = CHAIN_PRESETS[id]!;
      assert.equal(c.confirmations, preset.confirmations);
      assert.equal(c.finalityConfirmations, preset.finality_confirmations);
      assert.ok(c.finalityConfirmations >= c.confirmations);
      assert.equal(c.name, preset.name);
      assert.equal(c.pollIntervalMs, preset.poll_interval_ms);
    });
  }

  it('follows Circle’s table for Ethereum (12), Polygon (50) and Arbitrum (300)', () => {
    const { cwd, env } = withFile(buildFile({ chains: [chain({ chain_id: 1 }), chain({ chain_id: 137 }), chain({ chain_id: 42161 })] }));
    assert.deepEqual(
      loadConfig(env, cwd).chains.map((c) => c.confirmations),
      [12, 50, 300],
    );
  });

  it('explicit values win over the preset', () => {
    const { cwd, env } = withFile(buildFile({ chains: [chain({ chain_id: 1, name: 'Mainnet', confirmations: 3, finality_confirmations: 6, poll_interval_ms: 100 })] }));
    const c = loadConfig(env, cwd).chains[0]!;
    assert.deepEqual([c.name, c.confirmations, c.finalityConfirmations, c.pollIntervalMs], ['Mainnet', 3, 6, 100]);
  });

  it('a chain id alone takes no token from its preset: tokens are required unless `preset` is written', () => {
    const { cwd, env } = withFile(buildFile({ chains: [{ chain_id: 137, rpc_url: 'https://rpc.example.com' }] }));
    assertConfigError(() => loadConfig(env, cwd), 'chains.0.tokens');
  });

  it('`preset` brings chain id, tokens (addresses, decimals, capabilities), depths and explorer', () => {
    const { cwd, env } = withFile(buildFile({ chains: [{ preset: 56, rpc_urls: ['https://a.example', 'https://b.example/v3/key'] }] }));
    const c = loadConfig(env, cwd).chains[0]!;
    assert.deepEqual([c.chainId, c.preset, c.rpcUrl, c.rpcUrls, c.explorerUrl], [56, 56, 'https://a.example', ['https://a.example', 'https://b.example/v3/key'], 'https://bscscan.com']);
    assert.deepEqual(c.tokens, [
      { symbol: 'USDC', address: '0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d', decimals: 18, readFromChain: ['eip2612'] },
      { symbol: 'USDT', address: '0x55d398326f99059ff775485246999027b3197955', decimals: 18, eip2612: false },
    ]);
  });

  it('every preset field can be overridden; `tokens` picks preset tokens by symbol and overrides their fields', () => {
    const { cwd, env } = withFile(
      buildFile({
        chains: [
          {
            preset: 137,
            rpc_url: 'https://rpc.example.com',
            name: 'Polygon (ours)',
            explorer_url: 'https://explorer.example/',
            confirmations: 5,
            finality_confirmations: 9,
            poll_interval_ms: 500,
            tokens: [
              { symbol: 'USDT', eip3009: false, eip712_name: 'USDT0', eip712_version: '1' },
              { symbol: 'EURC', address: USDC, decimals: 6 },
            ],
          },
        ],
      }),
    );
    const c = loadConfig(env, cwd).chains[0]!;
    assert.deepEqual([c.name, c.explorerUrl, c.confirmations, c.finalityConfirmations, c.pollIntervalMs], ['Polygon (ours)', 'https://explorer.example', 5, 9, 500]);
    assert.deepEqual(c.tokens, [
      { symbol: 'USDT', address: '0xc2132d05d31c914a87c6611c10748aeb04b58e8f', decimals: 6, eip2612: true, eip712: { name: 'USDT0', version: '1' } },
      { symbol: 'EURC', address: USDC.toLowerCase(), decimals: 6 },
    ]);
  });

  it('refuses an unknown preset, a chain_id that contradicts it, a token the preset lacks without address, both rpc_url and rpc_urls', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ preset: 31337, rpc_url: 'https://r.example' }, 'chains.0.preset'],
      [{ preset: 9999, rpc_url: 'https://r.example' }, 'chains.0.preset'],
      [{ preset: 137, chain_id: 1, rpc_url: 'https://r.example' }, 'chains.0.chain_id'],
      [{ preset: 137, rpc_url: 'https://r.example', tokens: [{ symbol: 'DAI', decimals: 18 }] }, 'chains.0.tokens.0.address'],
      [{ preset: 137, rpc_url: 'https://r.example', rpc_urls: ['https://s.example'] }, 'chains.0.rpc_urls'],
      [{ preset: 137, rpc_urls: ['https://s.example', 'https://s.example'] }, 'chains.0.rpc_urls'],
      [{ preset: 137 }, 'chains.0.rpc_url'],
      [{ preset: 137, rpc_url: 'https://r.example', tokens: [{ symbol: 'USDC', eip712_name: 'X' }] }, 'chains.0.tokens.0.eip712_version'],
    ];
    for (const [chain, key] of cases) {
      const { cwd, env } = withFile(buildFile({ chains: [chain] }));
      assertConfigError(() => loadConfig(env, cwd), key);
    }
  });

  it('every preset token address is EIP-55 checksummed (a typo changes the checksum) and BNB Chain’s have 18 decimals', () => {
    for (const [id, p] of Object.entries(CHAIN_PRESETS)) {
      for (const t of p.tokens ?? []) {
        assert.equal(getAddress(t.address), t.address, `${id} ${t.symbol}`);
        assert.equal(t.decimals, id === '56' ? 18 : 6, `${id} ${t.symbol}`);
      }
    }
    assert.deepEqual(
      PRESET_IDS.toSorted((a, b) => a - b),
      [1, 56, 137, 1088, 2345, 42161],
    );
  });

  it('a chain without a preset and without confirmations fails', () => {
    const { cwd, env } = withFile(buildFile({ chains: [chain({ chain_id: 999_999, finality_confirmations: 10 })] }));
    assertConfigError(() => loadConfig(env, cwd), 'chains.0.confirmations');
  });

  it('a chain without a preset and without finality_confirmations fails', () => {
    const { cwd, env } = withFile(buildFile({ chains: [chain({ chain_id: 999_999, confirmations: 3 })] }));
    assertConfigError(() => loadConfig(env, cwd), 'chains.0.finality_confirmations');
  });

  it('a chain without a preset gets a generic name and poll interval', () => {
    const { cwd, env } = withFile(buildFile({ chains: [chain({ chain_id: 999_999, confirmations: 3, finality_confirmations: 3 })] }));
    const c = loadConfig(env, cwd).chains[0]!;
    assert.equal(c.name, 'Chain 999999');
    assert.equal(c.pollIntervalMs, 2000);
  });
});
