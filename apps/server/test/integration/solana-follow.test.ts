// The Solana watcher core against the local SVM (@tollgate/svm) through the real RPC client
// (@solana/kit): reference-key following with pagination, transfers decoded from token balance
// changes (Token-2022 transfer fee), the attribution rule, confirmed → finalized, a dropped
// transaction, catch-up after downtime from saved cursors, no double report.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { payWithReference, rpcClient, startLocalSvm, transferFeeOf, type LocalSvm } from '@tollgate/svm';
import { attribute, transferKey, type SolanaOrderTerms } from '../../src/chain/solana/attribution.ts';
import type { SolanaTransfer } from '../../src/chain/solana/decode.ts';
import { solanaFamily } from '../../src/chain/solana/family.ts';
import { newReference } from '../../src/chain/solana/pay-url.ts';
import { createSolanaRpcClient, type SolanaRpc } from '../../src/chain/solana/rpc.ts';
import { catchUp, newestSignature, SignatureFollower, signaturesSince, type AddressCursor } from '../../src/chain/solana/scan.ts';
import { solanaChainFromFile } from '../../src/config/solana.ts';
import type { SolanaChainConfig } from '../../src/config/schema.ts';

const FEE = { basisPoints: 100, maximumFee: 50_000n };

describe('Solana watcher core on the local SVM', () => {
  let svm: LocalSvm;
  let rpc: SolanaRpc;
  let chain: SolanaChainConfig;
  let merchant: Address;
  before(async () => {
    svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 4, usdtTransferFee: FEE });
    rpc = createSolanaRpcClient(svm.rpcUrl);
    chain = solanaChainFromFile(
      {
        kind: 'solana',
        chain_id: 792703800,
        rpc_url: svm.rpcUrl,
        genesis_hash: svm.genesisHash,
        tokens: svm.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, program: t.fee || t.symbol === 'USDT' ? 'token-2022' : 'spl-token' })),
      },
      0,
    );
    merchant = (await generateKeyPairSigner()).address;
  });
  after(() => svm.stop());

  const token = (s: 'USDC' | 'USDT') => svm.tokens.find((t) => t.symbol === s)!;
  async function order(symbol: 'USDC' | 'USDT', amount: bigint): Promise<SolanaOrderTerms> {
    const t = token(symbol);
    const payTo = await solanaFamily.directPayTo(chain, merchant, { symbol, address: t.mint, decimals: t.decimals });
    return { orderId: `ord_${newReference().slice(0, 10)}`, reference: newReference(), mint: t.mint, payTo, amount };
  }
  function pay(symbol: 'USDC' | 'USDT', amount: bigint, references: string[], payer = 0) {
    const t = token(symbol);
    return payWithReference(rpcClient(svm.rpcUrl), {
      payer: svm.payers[payer]!,
      recipient: merchant,
      mint: t.mint,
      tokenProgram: t.program,
      decimals: t.decimals,
      amount,
      references: references as Address[],
      createRecipientAccount: true,
    });
  }
  function follower() {
    const confirmed: SolanaTransfer[] = [];
    const finalized: string[] = [];
    const f = new SignatureFollower(rpc, 'confirmed', { confirmed: (t) => void confirmed.push(t), finalized: (s) => void finalized.push(s) });
    return { f, confirmed, finalized };
  }

  test("config and port: CAIP-2 from the genesis hash, pay-to is the wallet's associated token account", () => {
    assert.equal(solanaFamily.network(chain), svm.caip2);
    assert.deepEqual(solanaFamily.depth(chain), { unit: 'commitment', confirm: 'confirmed', invoice: 'finalized' });
    assert.equal(solanaFamily.normalizeAddress(merchant), merchant);
    assert.equal(solanaFamily.normalizeAddress('0x' + '11'.repeat(20)), undefined);
  });

  test('USDC and USDT (Token-2022 with a fee) by reference: confirmed, then finalized; the fee is seen as under-payment', async () => {
    const usdc = await order('USDC', 2_500_000n);
    const usdt = await order('USDT', 1_000_000n);
    const usdtShort = await order('USDT', 1_000_000n);
    const orders = new Map([usdc, usdt, usdtShort].map((o) => [o.reference, o]));
    const { f, confirmed, finalized } = follower();
    for (const o of orders.values()) f.watch(o.reference);
    const s1 = await pay('USDC', 2_500_000n, [usdc.reference]);
    // the payer grosses up by the fee so the merchant receives the order amount
    const gross = 1_000_000n + transferFeeOf(1_010_102n, FEE);
    const s2 = await pay('USDT', gross, [usdt.reference]);
    const s3 = await pay('USDT', 1_000_000n, [usdtShort.reference], 1);
    assert.deepEqual(await f.tick(), { transfers: 0, finalized: 0 }, 'processed is not enough');
    svm.ledger.advance(1);
    assert.equal((await f.tick()).transfers, 3);
    const bySig = new Map(confirmed.map((t) => [t.signature, t]));
    const a1 = attribute(bySig.get(s1)!, (r) => orders.get(r));
    assert.equal(a1.kind, 'paid');
    assert.equal(a1.kind === 'paid' && a1.order.orderId, usdc.orderId);
    const a2 = attribute(bySig.get(s2)!, (r) => orders.get(r));
    assert.equal(a2.kind, 'paid', JSON.stringify({ gross: String(gross), received: String(bySig.get(s2)!.received) }));
    const a3 = attribute(bySig.get(s3)!, (r) => orders.get(r));
    assert.deepEqual(a3.kind === 'underpaid' && a3.received, 1_000_000n - transferFeeOf(1_000_000n, FEE));
    assert.deepEqual(finalized, []);
    svm.ledger.advance(3);
    await f.tick();
    assert.deepEqual(new Set(finalized), new Set([s1, s2, s3]));
    assert.equal(new Set(confirmed.map(transferKey)).size, 3);
  });

  test('wrong mint and missing reference are never attributed by amount or sender', async () => {
    const want = await order('USDT', 700_000n);
    const { f, confirmed } = follower();
    f.watch(want.reference);
    f.watch(want.payTo, await newestSignature(rpc, want.payTo)); // fallback: the merchant's token account, from now on
    await pay('USDC', 700_000n, [want.reference]); // right reference, wrong token
    await pay('USDT', 700_000n, []); // right token and amount, no reference
    svm.ledger.advance(1);
    await f.tick();
    const kinds = confirmed.map((t) => attribute(t, (r) => (r === want.reference ? want : undefined)).kind).sort();
    assert.deepEqual(kinds, ['no_reference', 'wrong_mint']);
  });

  test('a dropped transaction is never reported; the order can still be paid by a later one', async () => {
    const o = await order('USDC', 10_000n);
    const { f, confirmed } = follower();
    f.watch(o.reference);
    svm.ledger.dropNext(1);
    await pay('USDC', 10_000n, [o.reference]);
    svm.ledger.advance(5);
    assert.equal((await f.tick()).transfers, 0);
    const again = await pay('USDC', 10_000n, [o.reference], 2);
    svm.ledger.advance(1);
    await f.tick();
    assert.deepEqual(
      confirmed.map((t) => t.signature),
      [again],
    );
  });

  test('catch-up after downtime: a new follower resumes from saved cursors through several pages, reporting each transfer once', async () => {
    const o = await order('USDC', 1n);
    const first = follower();
    first.f.watch(o.reference);
    first.f.watch(o.payTo, await newestSignature(rpc, o.payTo));
    await pay('USDC', 1n, [o.reference]);
    svm.ledger.advance(1);
    await first.f.tick();
    assert.equal(first.confirmed.length, 1);
    const saved = first.f.cursors();
    // "downtime": 7 transfers land while nobody follows
    const missed: string[] = [];
    for (let i = 0; i < 7; i++) missed.push(await pay('USDC', 2n + BigInt(i), [o.reference], i % 3));
    svm.ledger.advance(1);
    const paged = await signaturesSince(rpc, o.reference, { until: saved.get(o.reference), commitment: 'confirmed', pageSize: 2 });
    assert.deepEqual(
      paged.map((s) => s.signature),
      missed,
      'oldest first across 4 pages',
    );
    const second = follower();
    for (const [address, cursor] of saved) second.f.watch(address, cursor);
    await second.f.tick();
    // seen through both the reference and the token account, reported once per transfer
    assert.deepEqual(
      second.confirmed.map((t) => t.signature),
      missed,
    );
    await second.f.tick();
    assert.equal(second.confirmed.length, 7);
  });
  test('catchUp: one call a tick reads a backlog to its end, oldest first, each signature once, resuming from any saved state after a crash', async () => {
    const o = await order('USDC', 1n);
    const paid: string[] = [];
    for (let i = 0; i < 5; i++) paid.push(await pay('USDC', 10n + BigInt(i), [o.reference], i % 3));
    svm.ledger.advance(1);
    // the durable state, as solana_cursors holds it; `crashAt` throws once, like a process killed there
    let saved: AddressCursor = { until: undefined, pages: [] };
    const processed: string[] = [];
    let crashAt: 'pop' | undefined = 'pop';
    const io = {
      async savePages(pages: string[], end: string | undefined) {
        if (crashAt === 'pop' && end !== undefined) {
          crashAt = undefined;
          throw new Error('crash after a page was processed, before its boundary was popped');
        }
        saved = { ...saved, pages: [...pages], end };
      },
      async process(x: { signature: string }) {
        processed.push(x.signature);
        saved = { ...saved, until: x.signature };
        return true;
      },
    };
    const results: string[] = [];
    for (let tick = 0; tick < 30 && results[results.length - 1] !== 'done'; tick++) {
      results.push(await catchUp(rpc, o.reference, saved, { commitment: 'confirmed', pageSize: 1, maxPages: 1 }, io).catch((e: Error) => `crash: ${e.message.slice(0, 5)}`));
    }
    assert.equal(results[results.length - 1], 'done', results.join(', '));
    assert.ok(results.includes('crash: crash'), 'the crash happened');
    assert.deepEqual(processed, paid, 'oldest first, each once');
    assert.deepEqual(saved.pages, []);
    // caught up: nothing new, nothing processed again; a new payment is read next
    assert.equal(await catchUp(rpc, o.reference, saved, { commitment: 'confirmed', pageSize: 1, maxPages: 1 }, io), 'done');
    const next = await pay('USDC', 99n, [o.reference]);
    svm.ledger.advance(1);
    assert.equal(await catchUp(rpc, o.reference, saved, { commitment: 'confirmed', pageSize: 2, maxPages: 2 }, io), 'done');
    assert.deepEqual(processed, [...paid, next]);
  });
});
