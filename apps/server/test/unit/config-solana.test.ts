// Solana entries of the config file (kind "solana"): parsed into config.solanaChains beside the EVM
// chains, CAIP-2 id from the genesis hash, token programs, errors naming chains.<i>.<field>.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/load.ts';

const MASTER_KEY = 'ab'.repeat(32);
const MAINNET = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const USDT_MINT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const evm = { chain_id: 31337, rpc_url: 'http://127.0.0.1:8545', tokens: [{ symbol: 'USDC', address: '0x' + '11'.repeat(20), decimals: 6 }] };
function solana(extra: Record<string, unknown> = {}) {
  return {
    kind: 'solana',
    chain_id: 792703809,
    rpc_url: 'https://rpc.example',
    genesis_hash: MAINNET,
    tokens: [
      { symbol: 'USDC', mint: USDC_MINT, decimals: 6, program: 'spl-token' },
      { symbol: 'USDT', mint: USDT_MINT, decimals: 6, program: 'token-2022' },
    ],
    ...extra,
  };
}

function load(chains: unknown[]) {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-solana-'));
  dirs.push(cwd);
  writeFileSync(join(cwd, 'tollgate.json'), JSON.stringify({ environment: 'test', chains }));
  return loadConfig({ TOLLGATE_CONFIG: 'tollgate.json', MASTER_KEY }, cwd);
}

describe('config: Solana chains', () => {
  it('a kind "solana" entry is a Solana cluster; EVM chains are unchanged beside it', () => {
    const c = load([evm, solana()]);
    assert.deepEqual(
      c.chains.map((x) => x.chainId),
      [31337],
    );
    const s = c.solanaChains![0]!;
    assert.equal(s.network, 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp');
    assert.equal(s.name, 'Solana');
    assert.equal(s.explorerUrl, 'https://explorer.solana.com');
    assert.equal(s.confirmCommitment, 'confirmed');
    assert.equal(s.finalityCommitment, 'finalized');
    assert.deepEqual(
      s.tokens.map((t) => [t.symbol, t.programId]),
      [
        ['USDC', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'],
        ['USDT', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb'],
      ],
    );
    assert.equal(load([solana({ confirm_commitment: 'finalized' })]).solanaChains![0]!.confirmCommitment, 'finalized');
  });

  it('errors name the entry and field', () => {
    const bad = (chains: unknown[], key: string) =>
      assert.throws(
        () => load(chains),
        (e: unknown) => e instanceof ConfigError && e.key === key,
      );
    bad([solana({ genesis_hash: '0xnot-base58' })], 'chains.0.genesis_hash');
    bad([evm, solana({ tokens: [{ symbol: 'USDC', mint: USDC_MINT, decimals: 6, program: 'token' }] })], 'chains.1.tokens.0.program');
    bad([solana({ confirm_commitment: 'processed' })], 'chains.0.confirm_commitment');
    bad([evm, solana({ chain_id: 31337 })], 'chains.1.chain_id');
    bad([solana({ chain_id: 2 ** 31 })], 'chains.0.chain_id');
    bad([solana({ tokens: [solana().tokens[0], solana().tokens[0]] })], 'chains.0.tokens.1.symbol');
    // an EVM entry keeps its own schema's errors
    bad([{ ...evm, rpc_url: 'ftp://x' }], 'chains.0.rpc_url');
  });
});
