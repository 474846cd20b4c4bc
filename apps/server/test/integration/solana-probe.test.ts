// The Solana follower with many merchant token accounts (issue #25 item 4, chain/solana/probe.ts), on
// the local SVM through the real watcher and RPC client, its calls counted by the devchain proxy;
// PGlite and Postgres. Beyond `probeAbove` token accounts a tick asks getMultipleAccounts (100 a
// call) which amounts changed and reads only those plus a rotation; a payment followed at once by
// an outgoing transfer of the same amount (the amount looks untouched) is found by the rotation,
// and the scan position the expiry sweeper relies on does not pass it before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner, type Address, type KeyPairSigner } from '@solana/kit';
import { startRpcProxy, type RpcProxy } from '@tollgate/devchain';
import { payWithReference, rpcClient, startLocalSvm, type LocalSvm } from '@tollgate/svm';
import { createSolanaRpcClient } from '../../src/chain/solana/rpc.ts';
import { SolanaWatcher, type SolanaTick } from '../../src/chain/solana/watcher.ts';
import { solanaChainFromFile } from '../../src/config/solana.ts';
import type { SolanaChainConfig } from '../../src/config/schema.ts';
import { backends } from '../helpers/db.ts';
import { startTestServer, TestClock, type Creds, type TestServer } from '../helpers/server.ts';

const CHAIN_ID = 792703800;
const OTHERS = 19; // merchant wallets besides the one paid: 20 token accounts followed
const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x));

for (const backend of backends()) {
  describe(`Solana: many followed token accounts (${backend})`, () => {
    let svm: LocalSvm;
    let proxy: RpcProxy;
    let s: TestServer;
    let m: Creds;
    let merchant: KeyPairSigner;
    let chain: SolanaChainConfig;
    let w: SolanaWatcher;
    let seq = 0;
    const clock = new TestClock();
    before(async () => {
      svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 1000, payers: 2 });
      proxy = await startRpcProxy(svm.rpcUrl);
      chain = solanaChainFromFile({ kind: 'solana', chain_id: CHAIN_ID, rpc_url: svm.rpcUrl, genesis_hash: svm.genesisHash, tokens: [{ symbol: 'USDC', mint: svm.tokens[0]!.mint, decimals: 6, program: 'spl-token' }] }, 0);
      s = await startTestServer({ backend, role: 'api', clock, config: { solanaChains: [chain] } });
      m = await s.createMerchant({ name: 'Probe Shop', topUp: '10.00' });
      merchant = await generateKeyPairSigner();
      svm.ledger.airdrop(merchant.address, 1_000_000_000n); // fees of its outgoing transfer
      assert.equal((await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: CHAIN_ID, token_symbol: 'USDC', address: merchant.address })).status, 201);
      for (let i = 0; i < OTHERS; i++) {
        const other = await s.createMerchant({ name: `Other ${i}` });
        const r = await s.admin('POST', `/admin/v1/merchants/${other.merchantId}/wallets`, { chain_id: CHAIN_ID, token_symbol: 'USDC', address: (await generateKeyPairSigner()).address });
        assert.equal(r.status, 201, r.text);
      }
      // token-account mode from the first order; the probe beyond 4 addresses, every one read within 5 ticks
      w = new SolanaWatcher({ chain, db: s.tg.deps.db, clock, rpc: createSolanaRpcClient(proxy.url), referenceLimit: 0, probeAbove: 4, fullReadCycleTicks: 5, holderId: 'probe' });
    });
    after(async () => {
      await w?.release();
      await s?.close();
      await proxy?.close();
      await svm?.stop();
    });

    async function create(amount: bigint) {
      const r = await s.signed(m, 'POST', '/api/v1/orders', {
        body: { dapp_order_id: `p-${++seq}`, chain_id: CHAIN_ID, token_symbol: 'USDC', from_address: svm.payers[0]!.address, amount_wei: amount.toString() },
      });
      assert.equal(r.status, 402, r.text);
      return { id: r.body.order_id as string, url: new URL(r.body.extensions.paymentTerms.paymentUrl as string) };
    }
    const usdc = () => svm.tokens[0]!;
    const pay = (o: { url: URL }, amount: bigint) =>
      payWithReference(rpcClient(svm.rpcUrl), {
        payer: svm.payers[0]!,
        recipient: merchant.address,
        mint: usdc().mint,
        tokenProgram: usdc().program,
        decimals: 6,
        amount,
        references: o.url.searchParams.getAll('reference') as Address[],
        createRecipientAccount: true,
      });
    const status = async (id: string) => (await s.signed(m, 'GET', `/api/v1/orders/${id}`)).body.status as string;
    const scanSlot = async () => BigInt((await s.db.query<{ b: string }>('SELECT block_number::text AS b FROM chain_cursors WHERE chain_id = $1', [CHAIN_ID])).rows[0]?.b ?? -1);
    /** One tick and the RPC calls it made, by method. */
    async function tick(): Promise<{ t: Extract<SolanaTick, { kind: 'leader' }>; calls: Record<string, number> }> {
      const before = proxy.stats().calls;
      const t = await w.tick();
      assert.equal(t.kind, 'leader', json(t));
      const after = proxy.stats().calls;
      return {
        t: t as Extract<SolanaTick, { kind: 'leader' }>,
        calls: Object.fromEntries(
          Object.entries(after)
            .map(([k, v]) => [k, v - (before[k] ?? 0)])
            .filter(([, v]) => v !== 0),
        ),
      };
    }

    it('reads the changed accounts and a rotation, not every account; a payment is confirmed on the next tick', async () => {
      clock.ms = Date.now();
      const a = await create(3_000_000n);
      const first = await tick();
      assert.equal(first.t.followed, OTHERS + 1);
      assert.equal(first.calls.getSignaturesForAddress, OTHERS + 1, `never read: every account is read once ${json(first.calls)}`);
      const quiet = await tick();
      // rotation max(4, ceil(20 / 5)) = 4 reads; one getMultipleAccounts for 20 accounts
      assert.deepEqual([quiet.calls.getSignaturesForAddress, quiet.calls.getMultipleAccounts], [4, 1], json(quiet.calls));
      await pay(a, 3_000_000n);
      svm.ledger.advance(1);
      const paid = await tick();
      assert.equal(paid.t.confirmed, 1, json(paid));
      assert.equal(await status(a.id), 'PAYMENT_CONFIRMED');
      assert.ok(paid.calls.getSignaturesForAddress! <= 5, `the changed account and the rotation: ${json(paid.calls)}`);
      assert.equal((await s.db.query('SELECT 1 FROM chain_transfers WHERE chain_id = $1', [CHAIN_ID])).rows.length, 1, 'one transfer recorded');
    });

    it('a payment moved out again before the next tick (amount unchanged) is found by the rotation; the scan position waits for it', async () => {
      const b = await create(4_000_000n);
      await tick();
      await pay(b, 4_000_000n);
      const paidAt = svm.ledger.slot;
      // the merchant forwards it at once: the account's amount is what the probe saw last
      await payWithReference(rpcClient(svm.rpcUrl), { payer: merchant, recipient: svm.payers[1]!.address, mint: usdc().mint, tokenProgram: usdc().program, decimals: 6, amount: 4_000_000n });
      svm.ledger.advance(1);
      const seen: string[] = [];
      for (let i = 0; i < 6 && (await status(b.id)) !== 'PAYMENT_CONFIRMED'; i++) {
        await tick();
        seen.push(`${await status(b.id)}@${await scanSlot()}`);
        if ((await status(b.id)) !== 'PAYMENT_CONFIRMED') assert.ok((await scanSlot()) < paidAt, `the scan position passed an unread payment: ${seen.join(' ')}`);
      }
      assert.equal(await status(b.id), 'PAYMENT_CONFIRMED', `within a rotation (5 ticks): ${seen.join(' ')}`);
      // once read, the position moves on past it as the rotation completes
      for (let i = 0; i < 6; i++) await tick();
      assert.ok((await scanSlot()) >= paidAt, `the scan position catches up: ${await scanSlot()} < ${paidAt}`);
    });
  });
}
