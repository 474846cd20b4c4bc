// GET /admin/v1/chains and `tollgate chains`: the configured chains with their tokens and the
// DELEGATE addresses (settlement contract = spent and core address, executor derived from
// SETTLEMENT_KEY), then the Solana clusters with the delegate's public key. No key appears in an answer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { SettlementSigner } from '../../src/config/schema.ts';
import { solanaChainFromFile, solanaDelegateKeyFromSeed } from '../../src/config/solana.ts';
import { backends } from '../helpers/db.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { fakeChain, startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../helpers/server.ts';

// anvil's public test account 7: never a real key
const KEY = '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356' as const;
const EXECUTOR = privateKeyToAccount(KEY).address;
const SETTLEMENT = '0x8464135c8f25da09e49bc8782676a84730c318bc' as const;
// A made-up cluster (no RPC is contacted by an api-role server) and a delegate seed made for this test.
const GENESIS = '4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY';
const MINT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
const DELEGATE_SEED = new Uint8Array(32).fill(7);
const DELEGATE = solanaDelegateKeyFromSeed(DELEGATE_SEED);
const cluster = solanaChainFromFile({ kind: 'solana', chain_id: 900, name: 'Cluster', rpc_url: 'http://127.0.0.1:1', genesis_hash: GENESIS, tokens: [{ symbol: 'USDT', mint: MINT, decimals: 6, program: 'token-2022' }] }, 0);

for (const backend of backends()) {
  describe(`admin chains (${backend})`, () => {
    let s: TestServer;
    before(async () => {
      const delegate = fakeChain(31337);
      delegate.settlementContract = SETTLEMENT;
      delegate.tokens[0]!.eip3009 = true;
      s = await startTestServer({ backend, role: 'api', chains: [delegate, { ...fakeChain(8453), name: 'Other' }], config: { settlement: new SettlementSigner(KEY, EXECUTOR), solanaChains: [cluster], solanaDelegate: DELEGATE } });
    });
    after(async () => {
      await s?.close();
    });

    it('requires the admin token', async () => {
      assert.equal((await s.request('GET', '/admin/v1/chains')).status, 401);
      assert.equal((await s.request('GET', '/admin/v1/chains', { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status, 401);
    });

    it('lists every chain and Solana cluster with tokens, confirmations and DELEGATE addresses, never a key', async () => {
      const r = await s.admin('GET', '/admin/v1/chains');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, [
        {
          kind: 'evm',
          chain_id: 31337,
          name: 'Test',
          head_block: null,
          confirmations: 1,
          finality_confirmations: 2,
          tokens: [
            { symbol: 'USDC', address: '0x5fbdb2315678afecb367f032d93f642f64180aa3', decimals: 6, eip3009: true },
            { symbol: 'USDT', address: '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512', decimals: 6, eip3009: false },
          ],
          delegate: { enabled: true, core_address: SETTLEMENT, spent_address: SETTLEMENT, executor_address: EXECUTOR },
        },
        {
          kind: 'evm',
          chain_id: 8453,
          name: 'Other',
          head_block: null,
          confirmations: 1,
          finality_confirmations: 2,
          tokens: [
            { symbol: 'USDC', address: '0x5fbdb2315678afecb367f032d93f642f64180aa3', decimals: 6, eip3009: false },
            { symbol: 'USDT', address: '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512', decimals: 6, eip3009: false },
          ],
          // An executor key alone does not enable DELEGATE on a chain without its settlement contract.
          delegate: { enabled: false, core_address: null, spent_address: null, executor_address: EXECUTOR },
        },
        {
          kind: 'solana',
          chain_id: 900,
          name: 'Cluster',
          network: `solana:${GENESIS.slice(0, 32)}`,
          genesis_hash: GENESIS,
          head_slot: null,
          confirm_commitment: 'confirmed',
          finality_commitment: 'finalized',
          tokens: [{ symbol: 'USDT', mint: MINT, decimals: 6, program_id: 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb' }],
          delegate: { enabled: true, delegate_address: DELEGATE.address },
        },
      ]);
      assert.equal(r.text.toLowerCase().includes(KEY.slice(2)), false, 'the executor key is in the answer');
      // The delegate's private seed in any encoding the answer could carry: hex, base64, base58 of seed ‖ public.
      for (const form of [Buffer.from(DELEGATE_SEED).toString('hex'), Buffer.from(DELEGATE_SEED).toString('base64')]) {
        assert.equal(r.text.includes(form), false, 'the delegate key is in the answer');
      }
    });

    it('head_block is the watcher cursor of the chain', async () => {
      await s.db.query("INSERT INTO chain_cursors (chain_id, block_number, block_hash) VALUES (31337, 1234, '0x' || repeat('ab', 32))");
      const r = await s.admin('GET', '/admin/v1/chains');
      assert.deepEqual(
        r.body.map((c: { kind: string; chain_id: number; head_block?: number | null; head_slot?: number | null }) => [c.chain_id, c.kind === 'solana' ? c.head_slot : c.head_block]),
        [
          [31337, 1234],
          [8453, null],
          [900, null],
        ],
      );
    });

    it('tollgate chains: human and --json output', async () => {
      const run = async (...args: string[]) => {
        const p = spawnTollgate(args, { TOLLGATE_URL: s.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN });
        const code = p.child.exitCode ?? (await new Promise<number | null>((res) => p.child.once('exit', res)));
        return { code, out: p.output() };
      };
      const human = await run('chains');
      assert.equal(human.code, 0, human.out);
      assert.match(human.out, /31337 Test: head 1234, confirmations 1, finality 2/);
      assert.match(human.out, /USDC 0x5fbdb2315678afecb367f032d93f642f64180aa3 decimals 6, EIP-3009/);
      assert.match(human.out, new RegExp(`delegate: enabled, settlement ${SETTLEMENT}, executor ${EXECUTOR}`));
      assert.match(human.out, /8453 Other: head not scanned yet/);
      assert.match(human.out, /delegate: disabled, settlement none/);
      assert.match(human.out, new RegExp(`900 Cluster \\(solana:${GENESIS.slice(0, 32)}\\): head slot not scanned yet, confirmed at confirmed`));
      assert.match(human.out, new RegExp(`USDT ${MINT} decimals 6, program TokenzQ`));
      assert.match(human.out, new RegExp(`delegate: enabled, ${DELEGATE.address}`));
      const json = await run('chains', '--json');
      assert.equal(json.code, 0, json.out);
      assert.deepEqual(JSON.parse(json.out), (await s.admin('GET', '/admin/v1/chains')).body);
      const bad = await run('chains', 'extra');
      assert.equal(bad.code, 1);
      assert.match(bad.out, /chains takes no argument/);
    });
  });
}
