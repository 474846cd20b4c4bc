// Chain presets against local chains of the same chain id (anvil --chain-id 137 / 56 / 1) with the
// test tokens' code placed at the presets' real addresses (anvil_setCode + storage): a chain that
// matches its preset is accepted and what the preset leaves uncertain is read from it; a chain that
// disagrees (decimals, EIP-712 name, EIP-3009, missing code, chain id of an RPC URL) is refused
// with one line, by `tollgate serve` as an operator would see it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { placeContract, shortString, startDevChain, startRpcProxy, type DevChain, type RpcProxy } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { loadConfig } from '../../src/config/load.ts';
import { CHAIN_PRESETS } from '../../src/config/presets.ts';
import type { ChainConfig } from '../../src/config/schema.ts';
import { checkEvmChains } from '../../src/chain/evm/preset-check.ts';
import { createChainLogger } from '../../src/chain/evm/context.ts';
import { backends } from '../helpers/db.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { startTestServer } from '../helpers/server.ts';

const MASTER_KEY = 'cd'.repeat(32);
const silent = createChainLogger('silent');
const dirs: string[] = [];

function configFile(chains: unknown[]): { env: Record<string, string>; cwd: string } {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-presets-'));
  dirs.push(cwd);
  writeFileSync(join(cwd, 'tollgate.json'), JSON.stringify({ environment: 'test', chains }));
  return { cwd, env: { TOLLGATE_CONFIG: 'tollgate.json', MASTER_KEY, ADMIN_TOKEN: 'preset-admin-token-0123456789', DATA_DIR: join(cwd, 'data'), PORT: '0', LOG_LEVEL: 'warn' } };
}
const chainsOf = (chains: unknown[]): ChainConfig[] => {
  const { env, cwd } = configFile(chains);
  return loadConfig(env, cwd).chains;
};
const presetToken = (id: number, symbol: string) => CHAIN_PRESETS[id]!.tokens!.find((t) => t.symbol === symbol)!.address;

describe('chain presets against a local chain of the same id', () => {
  let polygon: DevChain;
  let bnb: DevChain;
  let ethereum: DevChain;
  let proxy: RpcProxy;
  /** The test tokens of a devchain: TestToken (EIP-3009, 2612, 5267) and TestTetherToken (none). */
  const source = (d: DevChain, symbol: 'USDC' | 'USDT'): Hex => d.tokens.find((t) => t.symbol === symbol)!.address;

  before(async () => {
    [polygon, bnb, ethereum] = await Promise.all([startDevChain({ chainId: 137, usdt: 'tether' }), startDevChain({ chainId: 56, usdt: 'tether' }), startDevChain({ chainId: 1, usdt: 'tether' })]);
    // Polygon: native USDC as Circle's ("USD Coin" / "2"); USDT a token with EIP-3009 whose
    // domain the preset leaves to the chain.
    await placeContract(polygon.rpcUrl, source(polygon, 'USDC'), presetToken(137, 'USDC'), { '0x0': shortString('USD Coin') });
    await placeContract(polygon.rpcUrl, source(polygon, 'USDC'), presetToken(137, 'USDT'), { '0x0': shortString('(PoS) Tether USD') });
    // BNB Chain: 6-decimal tokens where the Binance-Peg ones have 18.
    await placeContract(bnb.rpcUrl, source(bnb, 'USDC'), presetToken(56, 'USDC'));
    await placeContract(bnb.rpcUrl, source(bnb, 'USDT'), presetToken(56, 'USDT'));
    proxy = await startRpcProxy(polygon.rpcUrl, { limits: { chainId: 1 } });
  });
  after(async () => {
    await proxy?.close();
    await Promise.all([polygon?.stop(), bnb?.stop(), ethereum?.stop()]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  for (const backend of backends()) {
    it(`Polygon (137): accepted; uncertain USDT facts read from the chain; overrides win (${backend})`, async () => {
      const chains = chainsOf([{ preset: 137, rpc_urls: [polygon.rpcUrl], confirmations: 1, finality_confirmations: 2, poll_interval_ms: 100 }]);
      const c = chains[0]!;
      assert.deepEqual([c.chainId, c.name, c.explorerUrl, c.confirmations, c.finalityConfirmations], [137, 'Polygon PoS', 'https://polygonscan.com', 1, 2]);
      assert.deepEqual(c.tokens.find((t) => t.symbol === 'USDT')!.readFromChain, ['eip3009', 'eip712']);
      const s = await startTestServer({ backend, chains });
      try {
        const [usdc, usdt] = s.tg.deps.config.chains[0]!.tokens;
        assert.deepEqual(usdc, { symbol: 'USDC', address: presetToken(137, 'USDC').toLowerCase(), decimals: 6, eip3009: true, eip2612: true, eip712: { name: 'USD Coin', version: '2' } });
        // Read at start-up: the token at the USDT address has transferWithAuthorization and this domain.
        assert.deepEqual(usdt, { symbol: 'USDT', address: presetToken(137, 'USDT').toLowerCase(), decimals: 6, eip3009: true, eip2612: true, eip712: { name: '(PoS) Tether USD', version: '2' } });
        const res = await s.admin('GET', '/admin/v1/chains');
        assert.equal(res.status, 200);
        const listed = (res.body as { chain_id: number; tokens: { symbol: string; address: string; eip3009: boolean }[] }[]).find((x) => x.chain_id === 137)!;
        assert.deepEqual(
          listed.tokens.map((t) => [t.symbol, t.address, t.eip3009]),
          [
            ['USDC', presetToken(137, 'USDC').toLowerCase(), true],
            ['USDT', presetToken(137, 'USDT').toLowerCase(), true],
          ],
        );
      } finally {
        await s.close();
      }
    });
  }

  it('BNB Chain (56): tokens with 6 decimals where the preset says 18 are refused by `tollgate serve` with one line; overriding decimals accepts them', async () => {
    const { env, cwd } = configFile([{ preset: 56, rpc_urls: [bnb.rpcUrl] }]);
    const p = spawnTollgate(['serve'], env, cwd);
    const exit = await new Promise<number | null>((resolve) => p.child.once('exit', resolve));
    const lines = p.output().trim().split('\n');
    assert.equal(exit, 1, p.output());
    assert.equal(lines.length, 1, p.output());
    assert.match(lines[0]!, new RegExp(`^tollgate: chain 56 \\(BNB Smart Chain\\): USDC ${presetToken(56, 'USDC').toLowerCase()} has 6 decimals, the config says 18$`));

    const overridden = chainsOf([
      {
        preset: 56,
        rpc_urls: [bnb.rpcUrl],
        tokens: [
          { symbol: 'USDC', decimals: 6 },
          { symbol: 'USDT', decimals: 6 },
        ],
      },
    ]);
    await checkEvmChains(overridden, silent);
    // BNB USDC's permit is uncertain: the test token has nonces() and DOMAIN_SEPARATOR().
    assert.equal(overridden[0]!.tokens[0]!.eip2612, true);
    assert.equal(overridden[0]!.tokens[1]!.eip2612, false, 'stated by the preset, not read');
  });

  it('a chain answering another chain id is refused: every RPC URL is checked', async () => {
    await assert.rejects(checkEvmChains(chainsOf([{ preset: 137, rpc_urls: [ethereum.rpcUrl] }]), silent), /^ChainCheckError: chain 137 \(Polygon PoS\): RPC URL #1 http:\/\/127\.0\.0\.1:\d+ serves chain 1$/);
    // The second of two URLs (a provider URL of another network) is enough to refuse the start.
    await assert.rejects(checkEvmChains(chainsOf([{ preset: 137, rpc_urls: [polygon.rpcUrl, proxy.url] }]), silent), /RPC URL #2 http:\/\/127\.0\.0\.1:\d+ serves chain 1$/);
    // Also without a preset.
    await assert.rejects(checkEvmChains(chainsOf([{ chain_id: 42161, rpc_url: proxy.url, tokens: [{ symbol: 'USDC', address: presetToken(137, 'USDC'), decimals: 6 }] }]), silent), /chain 42161 \(Arbitrum One\): RPC URL #1 .* serves chain 1/);
  });

  it('Ethereum (1): an EIP-712 name that differs, a token without EIP-3009, and an address without code are each refused', async () => {
    const usdc = presetToken(1, 'USDC');
    const usdt = presetToken(1, 'USDT');
    const eth = () => chainsOf([{ preset: 1, rpc_urls: [ethereum.rpcUrl] }]);
    await placeContract(ethereum.rpcUrl, source(ethereum, 'USDC'), usdc, { '0x0': shortString('USD Coin') });
    await assert.rejects(checkEvmChains(eth(), silent), new RegExp(`chain 1 \\(Ethereum\\): USDT ${usdt.toLowerCase()} has no contract code$`));
    await placeContract(ethereum.rpcUrl, source(ethereum, 'USDT'), usdt);
    await checkEvmChains(eth(), silent);

    await placeContract(ethereum.rpcUrl, source(ethereum, 'USDC'), usdc, { '0x0': shortString('USD Coin (PoS)') });
    await assert.rejects(checkEvmChains(eth(), silent), /USDC 0xa0b8\w+ has EIP-712 domain "USD Coin \(PoS\)" \/ "2", the config says "USD Coin" \/ "2"$/);
    // Overriding the domain name accepts the chain.
    await checkEvmChains(chainsOf([{ preset: 1, rpc_urls: [ethereum.rpcUrl], tokens: [{ symbol: 'USDC', eip712_name: 'USD Coin (PoS)', eip712_version: '2' }] }]), silent);

    await placeContract(ethereum.rpcUrl, source(ethereum, 'USDT'), usdc);
    await assert.rejects(checkEvmChains(eth(), silent), /USDC 0xa0b8\w+ has no EIP-3009 \(authorizationState reverts\), the config says it has$/);
  });
});
