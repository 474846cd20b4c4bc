// Chain watcher under reorgs (anvil_reorg through @tollgate/devchain), on every database backend:
// an unconfirmed payment reorged out is un-seen and never confirms; a PAYMENT_CONFIRMED one moves
// back with trigger 'orphan'; a payment re-mined in another block is matched again and invoiced once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, reorg, rpcRequest, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import type { ChainConfig } from '../../src/config/schema.ts';
import { findLedgerImbalances, getFeeBalance } from '../../src/fees/ledger.ts';
import type { ChainWatcher } from '../../src/chain/evm/watcher.ts';
import { readCursor } from '../../src/chain/evm/scan.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { FEE, chainConfigOf, createMerchant, createOrder, getOrderRow, headNumber, pay, payerAddress, startTestChain, transfersOf, transitionsOf, tickOk, watcherFor, type TestMerchant } from './watcher-fixtures.ts';

const PAYMENT_FIELDS = ['transfer_id', 'tx_hash', 'log_index', 'block_number', 'block_hash', 'paid_amount_wei', 'confirmations', 'payment_seen_at', 'confirmed_at'] as const;

for (const backend of backends()) {
  describe(`chain watcher: reorgs (${backend})`, () => {
    let tdb: TestDatabase;
    before(async () => {
      tdb = await openTestDatabase(backend);
    });
    after(async () => {
      await tdb?.drop();
    });

    async function withChain(fn: (e: { dev: DevChain; chain: ChainConfig; m: TestMerchant; w: ChainWatcher }) => Promise<void>) {
      const dev = await startTestChain();
      try {
        const chain = chainConfigOf(dev); // confirmations 2, finality 4
        const m = await createMerchant(tdb.db, chain);
        const w = watcherFor(tdb.db, chain);
        await mine(dev.rpcUrl, 6); // room below the payments for a rewind
        assert.equal((await tickOk(w)).kind, 'leader');
        await fn({ dev, chain, m, w });
      } finally {
        await dev.stop();
      }
    }

    it('un-sees an unconfirmed payment that a reorg removed; nothing confirms afterwards', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 0), amount: 2_000_000n });
        await pay(dev, 0, m.wallet, 2_000_000n);
        await tickOk(w);
        assert.ok((await getOrderRow(db, order.id)).transfer_id, 'seen at depth 1');

        await reorg(dev.rpcUrl, 1); // the payment's block is replaced by an empty one
        const r = await tickOk(w);
        assert.equal(r.kind === 'leader' && r.reorgs, 1);
        assert.equal(r.kind === 'leader' && r.orphaned, 1);
        const o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'CHECKOUT_VERIFIED');
        for (const f of PAYMENT_FIELDS) assert.equal(o[f], null, f);
        const trs = await transfersOf(db, chain.chainId);
        assert.equal(trs.length, 1);
        assert.ok(trs[0]!.orphaned_at, 'transfer orphaned');
        assert.equal(trs[0]!.match_status, 'matched'); // the record keeps what it was; orphaned_at says it is gone

        await mine(dev.rpcUrl, chain.finalityConfirmations + 2);
        await tickOk(w);
        await tickOk(w);
        const after = await getOrderRow(db, order.id);
        assert.equal(after.status, 'CHECKOUT_VERIFIED');
        assert.equal(after.transfer_id, null);
        assert.deepEqual(await transitionsOf(db, order.id), []);
        assert.equal((await transfersOf(db, chain.chainId)).length, 1);
        assert.equal((await getFeeBalance(db, m.id))!.captured, 0n);
        // The cursor is on the canonical chain again.
        const cursor = await readCursor(db, chain.chainId);
        const block = await rpcRequest<{ hash: string }>(dev.rpcUrl, 'eth_getBlockByNumber', [`0x${cursor!.blockNumber.toString(16)}`, false]);
        assert.equal(cursor!.blockHash, block.hash);
      }));

    it('moves a PAYMENT_CONFIRMED order back to CHECKOUT_VERIFIED when its payment is orphaned', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 1), amount: 3_000_000n });
        await pay(dev, 1, m.wallet, 3_000_000n);
        await mine(dev.rpcUrl, 1);
        await tickOk(w);
        assert.equal((await getOrderRow(db, order.id)).status, 'PAYMENT_CONFIRMED');

        await reorg(dev.rpcUrl, 3); // deeper than confirmations, shallower than finality
        await tickOk(w);
        const o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'CHECKOUT_VERIFIED');
        for (const f of PAYMENT_FIELDS) assert.equal(o[f], null, f);
        assert.deepEqual(
          (await transitionsOf(db, order.id)).map((t) => [t.from_status, t.to_status, t.trigger]),
          [
            ['CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED', 'confirm'],
            ['PAYMENT_CONFIRMED', 'CHECKOUT_VERIFIED', 'orphan'],
          ],
        );
        await mine(dev.rpcUrl, chain.finalityConfirmations);
        await tickOk(w);
        assert.equal((await getOrderRow(db, order.id)).status, 'CHECKOUT_VERIFIED');
        assert.deepEqual(await findLedgerImbalances(db), []);
      }));

    it('matches the same transaction again when it is re-mined in another block, and invoices once', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 2), amount: 4_000_000n });
        const txHash = await pay(dev, 2, m.wallet, 4_000_000n);
        const raw = await rpcRequest<Hex>(dev.rpcUrl, 'eth_getRawTransactionByHash', [txHash]);
        const first = await headNumber(dev);
        await tickOk(w);
        const seen = await getOrderRow(db, order.id);
        assert.equal(BigInt(seen.block_number!), first);

        await mine(dev.rpcUrl, 1);
        // Replace the payment's block and the next one; the payment lands in the second new block.
        await reorg(dev.rpcUrl, 2, [[raw, 1]]);
        const r = await tickOk(w);
        assert.equal(r.kind === 'leader' && r.reorgs, 1);
        const again = await getOrderRow(db, order.id);
        assert.equal(again.status, 'CHECKOUT_VERIFIED');
        assert.equal(again.tx_hash, txHash);
        assert.equal(BigInt(again.block_number!), first + 1n);
        assert.notEqual(again.block_hash, seen.block_hash);
        assert.notEqual(again.transfer_id, seen.transfer_id);

        const trs = await transfersOf(db, chain.chainId);
        assert.equal(trs.length, 2);
        assert.ok(trs[0]!.orphaned_at);
        assert.equal(trs[1]!.orphaned_at, null);
        assert.equal(trs[1]!.match_status, 'matched');
        assert.equal(trs[1]!.order_id, order.id);

        await mine(dev.rpcUrl, chain.finalityConfirmations);
        await tickOk(w);
        await tickOk(w);
        assert.equal((await getOrderRow(db, order.id)).status, 'INVOICED');
        const ts = await transitionsOf(db, order.id);
        assert.equal(ts.filter((t) => t.to_status === 'INVOICED').length, 1);
        assert.equal((await getFeeBalance(db, m.id))!.captured, FEE);
        assert.deepEqual(await findLedgerImbalances(db), []);
      }));

    it('waits while the head is below the cursor, then rewinds by hash once the chain regrows', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 4), amount: 6_000_000n });
        await pay(dev, 4, m.wallet, 6_000_000n);
        await tickOk(w);
        assert.ok((await getOrderRow(db, order.id)).transfer_id);

        await rpcRequest(dev.rpcUrl, 'anvil_rollback', [1]); // shorter chain: head is now below the cursor
        const waiting = await tickOk(w);
        assert.equal(waiting.kind === 'leader' && waiting.reorgs, 0);
        assert.ok((await getOrderRow(db, order.id)).transfer_id, 'no decision while the node is behind');

        await mine(dev.rpcUrl, chain.finalityConfirmations); // a different block at the payment's height, and more
        const r = await tickOk(w);
        assert.equal(r.kind === 'leader' && r.reorgs, 1);
        const o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'CHECKOUT_VERIFIED');
        assert.equal(o.transfer_id, null);
        assert.deepEqual(await transitionsOf(db, order.id), []);
      }));

    it('keeps a payment whose block survived a reorg above it', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 3), amount: 5_000_000n });
        await pay(dev, 3, m.wallet, 5_000_000n);
        await mine(dev.rpcUrl, 2);
        await tickOk(w);
        const seen = await getOrderRow(db, order.id);
        assert.equal(seen.status, 'PAYMENT_CONFIRMED');
        await reorg(dev.rpcUrl, 2); // only the two empty blocks above the payment
        const r = await tickOk(w);
        assert.equal(r.kind === 'leader' && r.reorgs, 1);
        assert.equal(r.kind === 'leader' && r.orphaned, 0);
        const o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'PAYMENT_CONFIRMED');
        assert.equal(o.transfer_id, seen.transfer_id);
        await mine(dev.rpcUrl, 2);
        await tickOk(w);
        assert.equal((await getOrderRow(db, order.id)).status, 'INVOICED');
        assert.equal((await transfersOf(db, chain.chainId)).length, 1);
      }));
  });
}
