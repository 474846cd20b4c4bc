// Three ways a Solana payment was lost or misattributed (issue #24), on the local SVM
// (@tollgate/svm) through the real watcher, the real RPC client and the HTTP API; PGlite and Postgres:
//  1. a backlog larger than a tick's pages (page size and page cap made small here instead of 20,000
//     signatures) is read to its end, oldest first, across ticks, and the expiry sweeper waits for it;
//  2. a recorded under- or late payment can be accepted once its transaction is finalized (the
//     family of the order's chain decides, not the EVM chain list), naming it by its signature;
//  3. a transfer mined after the order's expires_at, before the sweeper ran, is recorded `late`
//     (order.late_payment) and never pays the order, as on EVM.
// No background workers (role api): the test ticks the watcher and runs the sweeper by hand.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { payWithReference, rpcClient, startLocalSvm, type LocalSvm } from '@tollgate/svm';
import { SolanaWatcher, type SolanaTick } from '../../src/chain/solana/watcher.ts';
import { solanaChainFromFile } from '../../src/config/solana.ts';
import type { SolanaChainConfig } from '../../src/config/schema.ts';
import { backends } from '../helpers/db.ts';
import { startTestServer, TestClock, type Creds, type TestServer } from '../helpers/server.ts';

const CHAIN_ID = 792703800;
const TTL_MS = 600_000; // buildConfig's orderTtlSeconds
const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x));

for (const backend of backends()) {
  describe(`Solana: backlog, late and accepted payments (${backend})`, () => {
    let svm: LocalSvm;
    let s: TestServer;
    let m: Creds;
    let chain: SolanaChainConfig;
    let seq = 0;
    const clock = new TestClock();
    before(async () => {
      svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 3, payers: 3 });
      chain = solanaChainFromFile(
        { kind: 'solana', chain_id: CHAIN_ID, rpc_url: svm.rpcUrl, genesis_hash: svm.genesisHash, tokens: svm.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, program: t.symbol === 'USDT' ? 'token-2022' : 'spl-token' })) },
        0,
      );
      s = await startTestServer({ backend, role: 'api', clock, config: { solanaChains: [chain] } });
      m = await s.createMerchant({ name: 'Backlog Shop', topUp: '10.00' });
      const wallet = (await generateKeyPairSigner()).address;
      const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: CHAIN_ID, token_symbol: 'USDC', address: wallet });
      assert.equal(r.status, 201, r.text);
    });
    after(async () => {
      await s?.close();
      await svm?.stop();
    });

    async function create(amount: bigint) {
      const r = await s.signed(m, 'POST', '/api/v1/orders', {
        body: { dapp_order_id: `b-${++seq}`, chain_id: CHAIN_ID, token_symbol: 'USDC', from_address: svm.payers[0]!.address, amount_wei: amount.toString() },
      });
      assert.equal(r.status, 402, r.text);
      return { id: r.body.order_id as string, url: r.body.extensions.paymentTerms.paymentUrl as string };
    }
    function pay(url: string, opts: { payer?: number; amount?: bigint } = {}) {
      const u = new URL(url);
      const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
      const [whole, frac = ''] = u.searchParams.get('amount')!.split('.');
      return payWithReference(rpcClient(svm.rpcUrl), {
        payer: svm.payers[opts.payer ?? 0]!,
        recipient: u.pathname as Address,
        mint: usdc.mint,
        tokenProgram: usdc.program,
        decimals: usdc.decimals,
        amount: opts.amount ?? BigInt(whole! + frac.padEnd(usdc.decimals, '0')),
        references: u.searchParams.getAll('reference') as Address[],
        createRecipientAccount: true,
      });
    }
    const order = async (id: string) => (await s.signed(m, 'GET', `/api/v1/orders/${id}`)).body;
    const watchers: SolanaWatcher[] = [];
    function watcher(opts: Partial<ConstructorParameters<typeof SolanaWatcher>[0]> & { holderId: string }) {
      const w = new SolanaWatcher({ chain, db: s.tg.deps.db, clock, ...opts });
      watchers.push(w);
      return w;
    }
    afterEach(async () => {
      for (const w of watchers.splice(0)) await w.release();
    });
    async function leader(w: SolanaWatcher): Promise<Extract<SolanaTick, { kind: 'leader' }>> {
      const t = await w.tick();
      assert.equal(t.kind, 'leader', json(t));
      return t as Extract<SolanaTick, { kind: 'leader' }>;
    }

    it("a backlog larger than a tick's pages is read to its end, oldest first, across ticks; the sweeper waits for it", async () => {
      clock.ms = Date.now();
      const orders = [];
      for (let i = 0; i < 7; i++) orders.push(await create(100n + BigInt(i)));
      // token-account mode; 2 signatures a page, 2 calls a tick: at most 4 signatures a tick
      const w = watcher({ referenceLimit: 0, pageSize: 2, maxPages: 2, holderId: 'backlog' });
      await pay(orders[0]!.url);
      svm.ledger.advance(1);
      assert.equal((await leader(w)).confirmed, 1);
      // downtime: 7 transfers land (order 1 is paid twice: its first payment must be the one that pays)
      const sigs: string[] = [];
      for (let i = 1; i < 7; i++) sigs.push(await pay(orders[i]!.url, { payer: i % 3 }));
      const again = await pay(orders[1]!.url, { payer: 2 });
      svm.ledger.advance(1);
      const first = await leader(w);
      assert.ok(first.transfers <= 4, `the page cap holds: ${json(first)}`);
      // every order's expiry passes (server time) while the backlog is being read: none may expire,
      // their on-time payments are still unread
      clock.advance(TTL_MS / 1000 + 1);
      await leader(w);
      assert.equal(await s.tg.deps.orders.expireDue(), 0, 'no order expires while a backlog is unread');
      const ticks = [first];
      for (let i = 0; i < 10 && ticks[ticks.length - 1]!.behind !== 0; i++) ticks.push(await leader(w));
      for (let i = 1; i < 7; i++) {
        const o = await order(orders[i]!.id);
        assert.equal(o.status, 'PAYMENT_CONFIRMED', `order ${i}: ${json(o)}`);
        assert.equal(o.tx_hash, sigs[i - 1]);
      }
      const rows = (await s.db.query<{ tx_hash: string; match_status: string }>(`SELECT tx_hash, match_status FROM chain_transfers WHERE chain_id = $1 AND tx_hash = ANY($2::text[]) ORDER BY id`, [CHAIN_ID, [...sigs, again]])).rows;
      assert.deepEqual(
        rows.map((r) => r.tx_hash),
        [...sigs, again],
        'recorded oldest first',
      );
      assert.equal(rows[rows.length - 1]!.match_status, 'duplicate');
      assert.deepEqual([first.behind, first.backlog, ticks[ticks.length - 1]!.behind], [1, 1, 0], json(ticks));
      svm.ledger.advance(3);
      await leader(w);
      for (const o of orders) assert.equal((await order(o.id)).status, 'INVOICED');
      assert.equal(await s.tg.deps.orders.expireDue(), 0);
    });

    it('a transfer mined after expires_at, before the sweeper ran, is late (order.late_payment); accepted once finalized, by its signature', async () => {
      clock.ms = Date.now() - TTL_MS - 60_000; // the order expired a minute ago (chain time is the wall clock)
      const o = await create(250_000n);
      clock.ms = Date.now();
      const w = watcher({ holderId: 'late' });
      const sig = await pay(o.url);
      svm.ledger.advance(1);
      await leader(w);
      const rec = await order(o.id);
      assert.equal(rec.status, 'CHECKOUT_VERIFIED', json(rec));
      assert.equal(rec.needs_reconciliation, true);
      assert.deepEqual(
        rec.observed_transfers.map((x: any) => [x.tx_hash, x.kind]),
        [[sig, 'late']],
      );
      const ev = (await s.db.query<{ event: string; payload: any }>(`SELECT event, payload FROM webhook_events WHERE order_id = $1 ORDER BY id`, [o.id])).rows;
      const late = ev.filter((e) => e.event === 'order.late_payment');
      assert.equal(late.length, 1, json(ev.map((e) => e.event)));
      const payload = typeof late[0]!.payload === 'string' ? JSON.parse(late[0]!.payload) : late[0]!.payload;
      assert.deepEqual([payload.transfer.kind, payload.transfer.tx_hash], ['late', sig]);
      assert.equal(await s.tg.deps.orders.expireDue(), 1);
      assert.equal((await order(o.id)).status, 'EXPIRED');
      const early = await s.signed(m, 'POST', `/api/v1/orders/${o.id}/accept-payment`, { body: { tx_hash: sig } });
      assert.equal(early.status, 409, early.text);
      assert.equal(early.body.code, 'payment_not_final');
      svm.ledger.advance(3);
      const ok = await s.signed(m, 'POST', `/api/v1/orders/${o.id}/accept-payment`, { body: { tx_hash: sig } });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual([ok.body.status, ok.body.tx_hash, ok.body.paid_amount_wei], ['INVOICED', sig, '250000']);
    });

    it('an under-payment is accepted once its transaction is finalized', async () => {
      clock.ms = Date.now();
      const o = await create(1_000_000n);
      const w = watcher({ holderId: 'short' });
      const sig = await pay(o.url, { amount: 400_000n, payer: 1 });
      svm.ledger.advance(1);
      await leader(w);
      const rec = await order(o.id);
      assert.deepEqual([rec.status, rec.observed_transfers?.[0]?.kind], ['CHECKOUT_VERIFIED', 'underpaid'], json(rec));
      const early = await s.signed(m, 'POST', `/api/v1/orders/${o.id}/accept-payment`, { body: {} });
      assert.equal(early.status, 409, early.text);
      assert.equal(early.body.code, 'payment_not_final');
      svm.ledger.advance(3);
      const ok = await s.signed(m, 'POST', `/api/v1/orders/${o.id}/accept-payment`, { body: {} });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual([ok.body.status, ok.body.tx_hash, ok.body.paid_amount_wei], ['INVOICED', sig, '400000']);
    });

    it('a transfer another purpose claimed first (claims ledger) is recorded as claimed: it pays no order and cannot be accepted', async () => {
      clock.ms = Date.now();
      const o = await create(300_000n);
      const w = watcher({ holderId: 'claimed' });
      const sig = await pay(o.url);
      svm.ledger.advance(4);
      // another rail reached the transfer first (signature, instruction index 0..3: the transfer's index is not known here)
      for (let i = 0; i < 4; i++) {
        await s.db.query(`INSERT INTO transfer_claims (chain_id, tx_ref, log_index, purpose, purpose_id, amount_wei, payer) VALUES ($1, $2, $3, 'x402_settlement', 'x402_other', 300000, $4)`, [CHAIN_ID, sig, i, svm.payers[0]!.address]);
      }
      await leader(w);
      const rec = await order(o.id);
      assert.deepEqual([rec.status, rec.tx_hash ?? null, rec.observed_transfers ?? []], ['CHECKOUT_VERIFIED', null, []], json(rec));
      const rows = (await s.db.query<{ match_status: string; order_id: string | null }>('SELECT match_status, order_id FROM chain_transfers WHERE tx_hash = $1', [sig])).rows;
      assert.deepEqual(rows, [{ match_status: 'claimed', order_id: null }]);
      const ev = (await s.db.query<{ event: string }>(`SELECT event FROM webhook_events WHERE order_id = $1 AND event <> 'order.created'`, [o.id])).rows;
      assert.deepEqual(ev, []);
      const acc = await s.signed(m, 'POST', `/api/v1/orders/${o.id}/accept-payment`, { body: {} });
      assert.equal(acc.status, 409, acc.text);
      assert.equal(acc.body.code, 'no_payment_to_accept');
    });
  });
}
