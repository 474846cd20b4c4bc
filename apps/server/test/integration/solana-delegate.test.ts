// SOL_APPROVE_XFER (DELEGATE on Solana) end to end on the local SVM (@tollgate/svm), through the
// HTTP API and the real RPC client (@solana/kit): a DELEGATE merchant's order on a Solana cluster
// tells the payer what to approve (the gateway's delegate key, the amount, the mint, the reference
// key); the payer signs approveChecked; the gateway notices it, pulls and settles to the merchant
// in one transaction (transferChecked as delegate + Memo naming the order), PAYMENT_CONFIRMED at
// confirmed, INVOICED at finalized with the settlement signature. An approval that never comes
// fails the order at expiry (order.failed). Crash safety: an attempt recorded but not sent is sent
// by the next worker byte for byte (same signature, once); a dropped attempt whose blockhash
// expired is replaced, and the merchant is paid once. PGlite and Postgres.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner, type Address, type Signature } from '@solana/kit';
import { approveDelegate, associatedTokenAddress, rpcClient, startLocalSvm, waitForSignature, type LocalSvm } from '@tollgate/svm';
import { MEMO_PROGRAM, settlementMemo } from '../../src/chain/solana/delegate/pull.ts';
import { SolanaSettlementWorker } from '../../src/chain/solana/delegate/worker.ts';
import { SolanaWatcher } from '../../src/chain/solana/watcher.ts';
import { referenceOf } from '../../src/chain/solana/reference.ts';
import { solanaChainFromFile, solanaDelegateKeyFromSeed } from '../../src/config/solana.ts';
import type { SolanaChainConfig } from '../../src/config/schema.ts';
import { backends } from '../helpers/db.ts';
import { startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

const CHAIN_ID = 792703800;

function chainOf(svm: LocalSvm): SolanaChainConfig {
  return solanaChainFromFile(
    {
      kind: 'solana',
      chain_id: CHAIN_ID,
      rpc_url: svm.rpcUrl,
      genesis_hash: svm.genesisHash,
      poll_interval_ms: 50,
      tokens: svm.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, program: t.symbol === 'USDT' ? 'token-2022' : 'spl-token' })),
    },
    0,
  );
}

async function balance(svm: LocalSvm, owner: string, symbol: string): Promise<bigint> {
  const t = svm.tokens.find((x) => x.symbol === symbol)!;
  const ata = await associatedTokenAddress(owner as Address, t.mint, t.program);
  const { value } = await rpcClient(svm.rpcUrl).getAccountInfo(ata, { encoding: 'base64' }).send();
  return value ? Buffer.from(value.data[0], 'base64').readBigUInt64LE(64) : 0n;
}

for (const backend of backends()) {
  describe(`SOL_APPROVE_XFER orders on the local SVM (${backend})`, () => {
    let svm: LocalSvm;
    const key = solanaDelegateKeyFromSeed(randomBytes(32));
    let chain: SolanaChainConfig;
    let live: TestServer; // workers running (the composition root's Solana settlement loop)
    let api: TestServer; // no workers: the tests drive SolanaSettlementWorker ticks themselves
    let m: Creds;
    let mApi: Creds;
    let wallet: string;
    let seq = 0;

    async function delegateMerchant(s: TestServer): Promise<Creds> {
      const c = await s.createMerchant({ name: 'Solana Delegate Shop', topUp: '10.00', body: { receive_type: 'DELEGATE' } });
      for (const t of ['USDC', 'USDT']) {
        const r = await s.admin('POST', `/admin/v1/merchants/${c.merchantId}/wallets`, { chain_id: CHAIN_ID, token_symbol: t, address: wallet });
        assert.equal(r.status, 201, r.text);
      }
      return c;
    }
    async function order(s: TestServer, c: Creds, token: string, amount: string, payer: string) {
      const r = await s.signed(c, 'POST', '/api/v1/orders', { body: { dapp_order_id: `sd-${backend}-${++seq}`, chain_id: CHAIN_ID, token_symbol: token, from_address: payer, amount_wei: amount } });
      assert.equal(r.status, 402, r.text);
      return r.body;
    }
    function waitForStatus(s: TestServer, c: Creds, id: string, want: string) {
      return waitFor(
        `order ${id} ${want}`,
        async () => {
          const last = (await s.signed(c, 'GET', `/api/v1/orders/${id}`)).body;
          if (last.status !== want) svm.ledger.advance(1);
          return last;
        },
        (last) => last.status === want,
        { everyMs: 40 },
      );
    }
    const worker = (s: TestServer, extra: Partial<ConstructorParameters<typeof SolanaSettlementWorker>[0]> = {}) => new SolanaSettlementWorker({ chain, key, db: s.db, clock: s.clock, leaseMs: 60_000, ...extra });

    before(async () => {
      svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 6 });
      svm.ledger.airdrop(key.address as Address, 10_000_000_000n); // the delegate pays the pulls' fees
      chain = chainOf(svm);
      wallet = (await generateKeyPairSigner()).address;
      [live, api] = await Promise.all([startTestServer({ backend, config: { solanaChains: [chain], solanaDelegate: key } }), startTestServer({ backend, config: { solanaChains: [chain], solanaDelegate: key }, role: 'api' })]);
      m = await delegateMerchant(live);
      mApi = await delegateMerchant(api);
    });
    after(async () => {
      await live?.close();
      await api?.close();
      await svm?.stop();
    });

    it('USDC: terms say what to approve; approveChecked → pulled and settled to the merchant in one transaction with the memo → PAYMENT_CONFIRMED → INVOICED', async () => {
      const payer = svm.payers[0]!;
      const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
      const terms = await order(live, m, 'USDC', '3000000', payer.address);
      assert.equal(terms.flow, 'SOL_APPROVE_XFER');
      assert.equal(terms.accepts[0].payTo, key.address, 'payToAddress is the delegate the payer approves');
      const approve = terms.extensions.paymentTerms.approve;
      assert.equal(terms.extensions.paymentTerms.receiveType, 'DELEGATE');
      assert.equal(terms.extensions.paymentTerms.paymentUrl, undefined, 'no transfer request: the payer approves');
      assert.deepEqual(approve, {
        instruction: 'approveChecked',
        delegate: key.address,
        mint: usdc.mint,
        tokenProgram: usdc.program,
        sourceTokenAccount: await associatedTokenAddress(payer.address, usdc.mint, usdc.program),
        amount: '3000000',
        decimals: 6,
        reference: referenceOf(terms.order_id),
      });
      const [payerBefore, merchantBefore] = [await balance(svm, payer.address, 'USDC'), await balance(svm, wallet, 'USDC')];

      const rpc = rpcClient(svm.rpcUrl);
      const approval = await approveDelegate(rpc, { payer, delegate: approve.delegate as Address, mint: approve.mint as Address, tokenProgram: approve.tokenProgram as Address, decimals: 6, amount: 3_000_000n, references: [approve.reference as Address] });
      await waitForSignature(rpc, approval, 'processed');
      const confirmed = await waitForStatus(live, m, terms.order_id, 'PAYMENT_CONFIRMED');
      assert.ok(confirmed.settlement_tx_hash, 'the settlement signature is named at confirmation');
      const invoiced = await waitForStatus(live, m, terms.order_id, 'INVOICED');
      assert.equal(invoiced.settlement_tx_hash, confirmed.settlement_tx_hash);
      assert.equal(invoiced.tx_hash, approval, 'tx_hash names the payer’s approval');
      assert.ok(invoiced.settled_at);
      assert.equal(await balance(svm, payer.address, 'USDC'), payerBefore - 3_000_000n);
      assert.equal(await balance(svm, wallet, 'USDC'), merchantBefore + 3_000_000n);

      // The settlement transaction: the transfer (delegate as authority, with the reference) and the memo, together.
      const tx = await rpc.getTransaction(invoiced.settlement_tx_hash as Signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'finalized' }).send();
      assert.ok(tx && tx.meta?.err === null);
      const keys = tx.transaction.message.accountKeys as readonly string[];
      const programs = tx.transaction.message.instructions.map((ix) => keys[ix.programIdIndex] as string);
      assert.ok(programs.includes(usdc.program as string) && programs.includes(MEMO_PROGRAM as string), programs.join(','));
      assert.ok(
        (tx.meta!.logMessages ?? []).some((l) => l.includes(settlementMemo(terms.order_id))),
        'the memo names the order',
      );
      assert.ok(keys.includes(referenceOf(terms.order_id)), 'the settlement carries the order’s reference key');
      assert.equal(keys[0], key.address, 'the delegate signs and pays the fee');

      // Once: one attempt recorded; the approval is used up on chain.
      const { rows } = await live.db.query<{ n: string | number }>('SELECT count(*) AS n FROM solana_settlements WHERE order_id = $1', [terms.order_id]);
      assert.equal(Number(rows[0]!.n), 1);
      const src = Buffer.from((await rpc.getAccountInfo(approve.sourceTokenAccount, { encoding: 'base64' }).send()).value!.data[0], 'base64');
      assert.equal(src.readBigUInt64LE(121), 0n, 'delegated amount consumed');
      const events = await live.db.query<{ event: string }>('SELECT event FROM webhook_events WHERE order_id = $1 ORDER BY created_at', [terms.order_id]);
      assert.deepEqual(
        events.rows.map((e) => e.event).filter((e) => e !== 'order.created'),
        ['order.payment_confirmed', 'order.invoiced'],
      );
    });

    it('an approval without the order’s reference, or for too little, is not acted on; no approval before expiry → FAILED with order.failed', async () => {
      const payer = svm.payers[1]!;
      const usdt = svm.tokens.find((t) => t.symbol === 'USDT')!;
      const terms = await order(api, mApi, 'USDT', '2000000', payer.address);
      const rpc = rpcClient(svm.rpcUrl);
      // Approvals the gateway must not use for this order: no reference; the reference but too little.
      await waitForSignature(rpc, await approveDelegate(rpc, { payer, delegate: key.address as Address, mint: usdt.mint, tokenProgram: usdt.program, decimals: usdt.decimals, amount: 5_000_000n }), 'processed');
      svm.ledger.advance(2);
      const w = worker(api);
      let t = await w.tick();
      assert.deepEqual([t.leader, t.sent], [true, []], 'an approval without the reference is not attributed');
      await waitForSignature(
        rpc,
        await approveDelegate(rpc, { payer, delegate: key.address as Address, mint: usdt.mint, tokenProgram: usdt.program, decimals: usdt.decimals, amount: 1_000_000n, references: [terms.extensions.paymentTerms.approve.reference] }),
        'processed',
      );
      svm.ledger.advance(2);
      t = await w.tick();
      assert.deepEqual(t.sent, [], 'an approval for less than the amount is not pulled');
      assert.equal(await balance(svm, wallet, 'USDT'), 0n);

      api.clock.advance(601); // past the order's expiry (order_ttl_seconds 600)
      t = await w.tick();
      assert.deepEqual(t.failed, [terms.order_id]);
      const o = (await api.signed(mApi, 'GET', `/api/v1/orders/${terms.order_id}`)).body;
      assert.equal(o.status, 'FAILED');
      assert.match(o.failure_reason, /did not approve/);
      const ev = await api.db.query<{ n: string | number }>(`SELECT count(*) AS n FROM webhook_events WHERE order_id = $1 AND event = 'order.failed'`, [terms.order_id]);
      assert.equal(Number(ev.rows[0]!.n), 1);
      // The expiry sweeper leaves these orders to the worker (FAILED, not EXPIRED), and nothing happens twice.
      assert.equal((await w.tick()).failed.length, 0);
      await w.release();
    });

    it('crash after recording the pull, before sending: the next worker sends the same bytes; one settlement, INVOICED', async () => {
      const payer = svm.payers[2]!;
      const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
      const terms = await order(api, mApi, 'USDC', '1500000', payer.address);
      const rpc = rpcClient(svm.rpcUrl);
      const approve = terms.extensions.paymentTerms.approve;
      await waitForSignature(rpc, await approveDelegate(rpc, { payer, delegate: key.address as Address, mint: usdc.mint, tokenProgram: usdc.program, decimals: 6, amount: 1_500_000n, references: [approve.reference] }), 'processed');
      svm.ledger.advance(2);
      const crashing = worker(api, { crashAfterRecord: (id) => id === terms.order_id });
      const t1 = await crashing.tick();
      assert.deepEqual(t1.sent, [], 'recorded, not sent');
      await crashing.release();
      const rec = (await api.db.query<{ signature: string; status: string }>('SELECT signature, status FROM solana_settlements WHERE order_id = $1', [terms.order_id])).rows;
      assert.equal(rec.length, 1);
      assert.equal(rec[0]!.status, 'pending');
      const recorded = (await api.signed(mApi, 'GET', `/api/v1/orders/${terms.order_id}`)).body;
      assert.equal(recorded.settlement_tx_hash, rec[0]!.signature, 'the order names the recorded settlement before it is sent');
      assert.equal((await rpc.getSignatureStatuses([rec[0]!.signature as Signature]).send()).value[0], null, 'not on chain');
      // A cancel now would race the pull: refused.
      const cancel = await api.signed(mApi, 'POST', `/api/v1/orders/${terms.order_id}/cancel`, { body: {} });
      assert.equal(cancel.status, 400, cancel.text);

      const next = worker(api);
      for (let i = 0; i < 20; i++) {
        await next.tick();
        svm.ledger.advance(1);
        const o = (await api.signed(mApi, 'GET', `/api/v1/orders/${terms.order_id}`)).body;
        if (o.status === 'INVOICED') break;
      }
      const done = (await api.signed(mApi, 'GET', `/api/v1/orders/${terms.order_id}`)).body;
      assert.equal(done.status, 'INVOICED');
      assert.equal(done.settlement_tx_hash, rec[0]!.signature, 'the recorded transaction is the one that landed');
      const rows = (await api.db.query<{ status: string }>('SELECT status FROM solana_settlements WHERE order_id = $1', [terms.order_id])).rows;
      assert.deepEqual(
        rows.map((r) => r.status),
        ['finalized'],
      );
      await next.release();
    });

    it('a dropped settlement is sent again byte for byte; once its blockhash expired unseen, a new one replaces it; the merchant is paid once', async () => {
      const payer = svm.payers[0]!;
      const usdt = svm.tokens.find((t) => t.symbol === 'USDT')!;
      const terms = await order(api, mApi, 'USDT', '1000000', payer.address);
      const rpc = rpcClient(svm.rpcUrl);
      const before = await balance(svm, wallet, 'USDT');
      await waitForSignature(
        rpc,
        await approveDelegate(rpc, { payer, delegate: key.address as Address, mint: usdt.mint, tokenProgram: usdt.program, decimals: usdt.decimals, amount: 1_000_000n, references: [terms.extensions.paymentTerms.approve.reference as Address] }),
        'processed',
      );
      svm.ledger.advance(2);
      const w = worker(api);
      // 1. The first send is accepted by the node and dropped (never executed).
      svm.ledger.dropNext(1);
      assert.deepEqual((await w.tick()).sent, [terms.order_id]);
      const first = (await api.db.query<{ signature: string }>('SELECT signature FROM solana_settlements WHERE order_id = $1', [terms.order_id])).rows[0]!.signature;
      assert.equal((await rpc.getSignatureStatuses([first as Signature]).send()).value[0], null, 'dropped');
      // 2. The next tick sends the same bytes again (dropped again); then the blockhash expires: the
      //    attempt can never land and is replaced by a new one, which lands.
      svm.ledger.dropNext(1);
      await w.tick(); // re-sent (dropped)
      svm.ledger.advance(160);
      svm.ledger.svm.expireBlockhash();
      for (let i = 0; i < 20; i++) {
        await w.tick();
        svm.ledger.advance(1);
        if ((await api.signed(mApi, 'GET', `/api/v1/orders/${terms.order_id}`)).body.status === 'INVOICED') break;
      }
      const rows = (await api.db.query<{ signature: string; status: string }>('SELECT signature, status FROM solana_settlements WHERE order_id = $1 ORDER BY id', [terms.order_id])).rows;
      assert.deepEqual(
        rows.map((r) => r.status),
        ['expired', 'finalized'],
      );
      assert.equal(rows[0]!.signature, first);
      const held = (await api.db.query<{ tx_ref: string }>(`SELECT tx_ref FROM transfer_claims WHERE purpose = 'order' AND purpose_id = $1`, [terms.order_id])).rows;
      assert.deepEqual(
        held.map((r) => r.tx_ref),
        [rows[1]!.signature],
        'the expired attempt’s claim was given back; the landed one holds',
      );
      const done = (await api.signed(mApi, 'GET', `/api/v1/orders/${terms.order_id}`)).body;
      assert.equal(done.status, 'INVOICED');
      assert.equal(done.settlement_tx_hash, rows[1]!.signature);
      assert.equal((await rpc.getSignatureStatuses([first as Signature], { searchTransactionHistory: true }).send()).value[0], null, 'the expired attempt never landed');
      assert.equal(await balance(svm, wallet, 'USDT'), before + 1_000_000n, 'paid once');
      await w.release();
    });

    it('waiting orders are looked at a page per tick, all of them: an approved order behind an unapproved one is pulled', async () => {
      const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
      const rpc = rpcClient(svm.rpcUrl);
      // Two waiting orders; only one is approved. With one order per tick, whichever sorts first,
      // the approved one is reached within two ticks (a page from the start each tick would starve it).
      const waiting = await order(api, mApi, 'USDC', '1100000', svm.payers[1]!.address);
      const approved = await order(api, mApi, 'USDC', '1200000', svm.payers[2]!.address);
      await waitForSignature(
        rpc,
        await approveDelegate(rpc, { payer: svm.payers[2]!, delegate: key.address as Address, mint: usdc.mint, tokenProgram: usdc.program, decimals: 6, amount: 1_200_000n, references: [approved.extensions.paymentTerms.approve.reference as Address] }),
        'processed',
      );
      svm.ledger.advance(2);
      const w = worker(api, { batch: 1 });
      const sent = [...(await w.tick()).sent, ...(await w.tick()).sent];
      assert.deepEqual(sent, [approved.order_id]);
      assert.equal((await api.signed(mApi, 'GET', `/api/v1/orders/${waiting.order_id}`)).body.status, 'CHECKOUT_VERIFIED');
      await w.release();
    });

    it('the pull is claimed for its order before it is sent (whole transaction); the DIRECT watcher following the merchant’s token account records it as claimed, never a payment', async () => {
      const payer = svm.payers[1]!;
      const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
      const terms = await order(api, mApi, 'USDC', '1300000', payer.address);
      const rpc = rpcClient(svm.rpcUrl);
      await waitForSignature(
        rpc,
        await approveDelegate(rpc, { payer, delegate: key.address as Address, mint: usdc.mint, tokenProgram: usdc.program, decimals: 6, amount: 1_300_000n, references: [terms.extensions.paymentTerms.approve.reference as Address] }),
        'processed',
      );
      svm.ledger.advance(2);
      const crashing = worker(api, { crashAfterRecord: (id) => id === terms.order_id });
      await crashing.tick();
      await crashing.release();
      const sig = (await api.db.query<{ signature: string }>('SELECT signature FROM solana_settlements WHERE order_id = $1', [terms.order_id])).rows[0]!.signature;
      const claims = async () => (await api.db.query<{ log_index: number; purpose: string; purpose_id: string }>('SELECT log_index, purpose, purpose_id FROM transfer_claims WHERE chain_id = $1 AND tx_ref = $2', [CHAIN_ID, sig])).rows;
      assert.deepEqual(await claims(), [{ log_index: -1, purpose: 'order', purpose_id: terms.order_id }], 'claimed with the record, before it is sent');
      const w = worker(api);
      for (let i = 0; i < 20 && (await api.signed(mApi, 'GET', `/api/v1/orders/${terms.order_id}`)).body.status !== 'INVOICED'; i++) {
        await w.tick();
        svm.ledger.advance(1);
      }
      await w.release();
      // the DIRECT watcher in token-account mode (it follows every merchant wallet's token accounts
      // while more SOL_DIRECT orders are open than referenceLimit: here one) sees the pull land
      const direct = await api.createMerchant({ name: 'Solana Direct Shop', topUp: '1.00' });
      assert.equal((await api.admin('POST', `/admin/v1/merchants/${direct.merchantId}/wallets`, { chain_id: CHAIN_ID, token_symbol: 'USDC', address: (await generateKeyPairSigner()).address })).status, 201);
      const open = await api.signed(direct, 'POST', '/api/v1/orders', { body: { dapp_order_id: `direct-${backend}`, chain_id: CHAIN_ID, token_symbol: 'USDC', from_address: payer.address, amount_wei: '1' } });
      assert.equal(open.body.flow, 'SOL_DIRECT', open.text);
      const watcher = new SolanaWatcher({ chain, db: api.db, clock: api.clock, referenceLimit: 0, holderId: 'direct' });
      const t = await watcher.tick();
      await watcher.release();
      assert.equal(t.kind, 'leader');
      const seen = (await api.db.query<{ match_status: string; order_id: string | null }>('SELECT match_status, order_id FROM chain_transfers WHERE chain_id = $1 AND tx_hash = $2', [CHAIN_ID, sig])).rows;
      assert.deepEqual(seen, [{ match_status: 'claimed', order_id: null }]);
      assert.deepEqual(await claims(), [{ log_index: -1, purpose: 'order', purpose_id: terms.order_id }], 'one claim, the order’s');
    });
  });
}
