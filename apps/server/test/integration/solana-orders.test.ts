// SOL_DIRECT orders end to end on the local SVM (@tollgate/svm), through the HTTP API, the running
// Solana watcher and the real RPC client (@solana/kit): 402 terms with a Solana Pay URL, USDC
// (SPL Token) and USDT (Token-2022 with a transfer fee) to INVOICED with a proof naming the
// signature; wrong mint, under-payment, a transfer without the reference, a dropped transaction;
// a watcher restart with catch-up through paged history (token-account mode). PGlite and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { payWithReference, rpcClient, startLocalSvm, transferFeeOf, type LocalSvm } from '@tollgate/svm';
import { referenceOf } from '../../src/chain/solana/reference.ts';
import { SolanaWatcher } from '../../src/chain/solana/watcher.ts';
import { solanaChainFromFile } from '../../src/config/solana.ts';
import type { SolanaChainConfig } from '../../src/config/schema.ts';
import { backends } from '../helpers/db.ts';
import { startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

const FEE = { basisPoints: 100, maximumFee: 1_000_000n };
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

function waitForStatus(s: TestServer, m: Creds, orderId: string, want: string, timeoutMs = 15_000) {
  return waitFor(
    `order ${orderId} ${want}`,
    async () => (await s.signed(m, 'GET', `/api/v1/orders/${orderId}`)).body,
    (last: any) => last.status === want,
    { timeoutMs, everyMs: 40 },
  );
}

/** Pays what a wallet would read from the order's `solana:` URL (recipient wallet, amount, mint, reference). */
async function payUrl(svm: LocalSvm, url: string, opts: { payer?: number; amount?: bigint; mint?: string; references?: string[] } = {}) {
  const u = new URL(url);
  const mint = opts.mint ?? u.searchParams.get('spl-token')!;
  const t = svm.tokens.find((x) => x.mint === mint)!;
  const [whole, frac = ''] = u.searchParams.get('amount')!.split('.');
  const amount = opts.amount ?? BigInt(whole! + frac.padEnd(t.decimals, '0'));
  return payWithReference(rpcClient(svm.rpcUrl), {
    payer: svm.payers[opts.payer ?? 0]!,
    recipient: u.pathname as Address,
    mint: t.mint,
    tokenProgram: t.program,
    decimals: t.decimals,
    amount,
    references: (opts.references ?? u.searchParams.getAll('reference')) as Address[],
    createRecipientAccount: true,
  });
}

for (const backend of backends()) {
  describe(`SOL_DIRECT orders on the local SVM (${backend})`, () => {
    let svm: LocalSvm;
    let s: TestServer;
    let m: Creds;
    let wallet: string;
    let seq = 0;
    before(async () => {
      svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 6, usdtTransferFee: FEE });
      s = await startTestServer({ backend, config: { solanaChains: [chainOf(svm)] } });
      m = await s.createMerchant({ name: 'Solana Shop', topUp: '10.00' });
      wallet = (await generateKeyPairSigner()).address;
      for (const t of ['USDC', 'USDT']) {
        const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: CHAIN_ID, token_symbol: t, address: wallet });
        assert.equal(r.status, 201, r.text);
        assert.equal(r.body.address, wallet, 'base58 kept as given');
      }
    });
    after(async () => {
      await s?.close();
      await svm?.stop();
    });

    async function create(symbol: 'USDC' | 'USDT', amount: bigint) {
      const r = await s.signed(m, 'POST', '/api/v1/orders', {
        body: { dapp_order_id: `sol-${Date.now()}-${++seq}`, chain_id: CHAIN_ID, token_symbol: symbol, from_address: svm.payers[0]!.address, amount_wei: amount.toString() },
      });
      assert.equal(r.status, 402, r.text);
      return r.body as { order_id: string; flow: string; accepts: [{ network: string; payTo: string; asset: string; amount: string }]; extensions: { paymentTerms: { paymentUrl: string; destinationChain: string } } };
    }

    it('USDC: 402 terms carry the CAIP-2 network and a Solana Pay URL; payment reaches PAYMENT_CONFIRMED, then INVOICED; the proof names the signature', async () => {
      const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
      const terms = await create('USDC', 2_500_000n);
      assert.equal(terms.flow, 'SOL_DIRECT');
      assert.equal(terms.accepts[0].network, svm.caip2);
      assert.equal(terms.extensions.paymentTerms.destinationChain, svm.caip2);
      assert.equal(terms.accepts[0].payTo, wallet);
      assert.equal(terms.accepts[0].asset, usdc.mint);
      const url = new URL(terms.extensions.paymentTerms.paymentUrl);
      assert.equal(url.protocol, 'solana:');
      assert.equal(url.pathname, wallet);
      assert.equal(url.searchParams.get('amount'), '2.5');
      assert.equal(url.searchParams.get('spl-token'), usdc.mint);
      assert.deepEqual(url.searchParams.getAll('reference'), [referenceOf(terms.order_id)]);

      const sig = await payUrl(svm, url.href);
      svm.ledger.advance(1);
      const confirmed = await waitForStatus(s, m, terms.order_id, 'PAYMENT_CONFIRMED');
      assert.equal(confirmed.tx_hash, sig);
      svm.ledger.advance(6);
      const invoiced = await waitForStatus(s, m, terms.order_id, 'INVOICED');
      assert.ok(invoiced.invoiced_at);
      const proof = (await s.signed(m, 'GET', `/api/v1/orders/${terms.order_id}/proof`)).body;
      assert.equal(proof.payload.tx_hash, sig);
      assert.equal(proof.payload.amount_wei, '2500000');
      const tx = await rpcClient(svm.rpcUrl)
        .getTransaction(sig as never, { commitment: 'finalized', encoding: 'json', maxSupportedTransactionVersion: 0 })
        .send();
      assert.ok(tx, 'the signature the proof names is a finalized transaction');
    });

    it('USDT on Token-2022 with a transfer fee: the exact amount is an under-payment (fee withheld); a grossed-up payment is INVOICED', async () => {
      const short = await create('USDT', 1_000_000n);
      await payUrl(svm, short.extensions.paymentTerms.paymentUrl);
      const gross = await create('USDT', 1_000_000n + 1n);
      const want = 1_000_001n;
      let pay = want;
      while (pay - transferFeeOf(pay, FEE) < want) pay++;
      const sig = await payUrl(svm, gross.extensions.paymentTerms.paymentUrl, { amount: pay, payer: 1 });
      svm.ledger.advance(7);
      const done = await waitForStatus(s, m, gross.order_id, 'INVOICED');
      assert.equal(done.tx_hash, sig);
      // The two transactions may be read in different ticks (slots moved mid-tick): wait for the record.
      let rec: any;
      for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 40))) {
        rec = (await s.signed(m, 'GET', `/api/v1/orders/${short.order_id}`)).body;
        if (rec.observed_transfers) break;
      }
      assert.equal(rec.status, 'CHECKOUT_VERIFIED');
      assert.equal(rec.needs_reconciliation, true);
      assert.equal(rec.observed_transfers[0].amount_wei, String(1_000_000n - transferFeeOf(1_000_000n, FEE)));
      const { rows } = await s.tg.deps.db.query<{ payload: any }>(`SELECT payload FROM webhook_events WHERE order_id = $1 AND event = 'order.underpaid'`, [short.order_id]);
      assert.equal(rows.length, 1, 'one order.underpaid event');
      const payload = typeof rows[0]!.payload === 'string' ? JSON.parse(rows[0]!.payload) : rows[0]!.payload;
      assert.equal(payload.transfer.kind, 'underpaid');
      assert.equal(payload.transfer.amount_wei, rec.observed_transfers[0].amount_wei);
    });

    it('wrong mint, a transfer without the reference and a dropped transaction pay nothing; a later correct payment does', async () => {
      const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
      const order = await create('USDT', 700_000n);
      const url = order.extensions.paymentTerms.paymentUrl;
      await payUrl(svm, url, { mint: usdc.mint, amount: 700_000n }); // right reference, USDC instead of USDT
      await payUrl(svm, url, { references: [] }); // right token and amount, no reference
      svm.ledger.dropNext(1);
      await payUrl(svm, url, { amount: 800_000n, payer: 2 }); // dropped: never lands
      svm.ledger.advance(7);
      await new Promise((r) => setTimeout(r, 400)); // several watcher ticks
      const rec = (await s.signed(m, 'GET', `/api/v1/orders/${order.order_id}`)).body;
      assert.equal(rec.status, 'CHECKOUT_VERIFIED');
      assert.equal(rec.tx_hash ?? null, null);
      const good = await payUrl(svm, url, { amount: 800_000n, payer: 1 });
      svm.ledger.advance(7);
      assert.equal((await waitForStatus(s, m, order.order_id, 'INVOICED')).tx_hash, good);
    });
  });

  describe(`Solana watcher restart and catch-up (${backend})`, () => {
    let svm: LocalSvm;
    let s: TestServer;
    let m: Creds;
    let chain: SolanaChainConfig;
    before(async () => {
      svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 3, payers: 2 });
      chain = chainOf(svm);
      // role api: no background watcher; the test drives two watcher instances by hand
      s = await startTestServer({ backend, role: 'api', config: { solanaChains: [chain] } });
      m = await s.createMerchant({ name: 'Restart Shop', topUp: '10.00' });
      const wallet = (await generateKeyPairSigner()).address;
      const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: CHAIN_ID, token_symbol: 'USDC', address: wallet });
      assert.equal(r.status, 201, r.text);
    });
    after(async () => {
      await s?.close();
      await svm?.stop();
    });

    it('a new leader resumes from the saved cursors, pays every order once, and ignores what it already recorded', async () => {
      const ids: string[] = [];
      const urls: string[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await s.signed(m, 'POST', '/api/v1/orders', {
          body: { dapp_order_id: `restart-${i}`, chain_id: CHAIN_ID, token_symbol: 'USDC', from_address: svm.payers[0]!.address, amount_wei: String(100 + i) },
        });
        assert.equal(r.status, 402, r.text);
        ids.push(r.body.order_id);
        urls.push(r.body.extensions.paymentTerms.paymentUrl);
      }
      // referenceLimit 0: follow the merchant's token account (the mode used with many open orders)
      const first = new SolanaWatcher({ chain, db: s.tg.deps.db, referenceLimit: 0, holderId: 'first' });
      await payUrl(svm, urls[0]!);
      svm.ledger.advance(1);
      const t1 = await first.tick();
      assert.equal(t1.kind === 'leader' && t1.confirmed, 1);
      await first.release(); // "crash": nothing follows the chain now
      for (let i = 1; i < 6; i++) await payUrl(svm, urls[i]!, { payer: i % 2 });
      svm.ledger.advance(4);
      const second = new SolanaWatcher({ chain, db: s.tg.deps.db, referenceLimit: 0, holderId: 'second' });
      const t2 = await second.tick();
      assert.ok(
        t2.kind === 'leader',
        JSON.stringify(t2, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
      );
      assert.equal(t2.confirmed, 5);
      for (const id of ids) assert.equal((await s.signed(m, 'GET', `/api/v1/orders/${id}`)).body.status, 'INVOICED');
      // the first instance comes back as a follower; the leader's next tick finds nothing new
      assert.deepEqual(await first.tick(), { kind: 'follower' });
      const t3 = await second.tick();
      assert.equal(t3.kind === 'leader' && t3.transfers, 0);
      const { rows } = await s.tg.deps.db.query<{ n: number | string }>(`SELECT count(*) AS n FROM chain_transfers WHERE chain_id = $1 AND match_status = 'matched'`, [CHAIN_ID]);
      assert.equal(Number(rows[0]!.n), 6);
      await second.release();
    });
  });
}
