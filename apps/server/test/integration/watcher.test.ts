// Chain watcher, happy paths and attribution outcomes, on a real anvil and every database backend:
// match → PAYMENT_CONFIRMED at `confirmations` → INVOICED at finality with the fee captured; the
// one-tick jump; best fit; under-payment; late payment (block time after expiry, and to an expired
// order); unmatched.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, rpcRequest, type DevChain } from '@tollgate/devchain';
import type { ChainConfig } from '../../src/config/schema.ts';
import { findLedgerImbalances, getFeeBalance } from '../../src/fees/ledger.ts';
import { transitionOrder } from '../../src/orders/transition.ts';
import { readCursor, scannedThrough } from '../../src/chain/evm/scan.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { FEE, chainConfigOf, createMerchant, createOrder, getOrderRow, headNumber, pay, payerAddress, randomAddress, startTestChain, transfersOf, transitionsOf, tickOk, watcherFor, type TestMerchant } from './watcher-fixtures.ts';
import type { ChainWatcher } from '../../src/chain/evm/watcher.ts';

for (const backend of backends()) {
  describe(`chain watcher: payments (${backend})`, () => {
    let tdb: TestDatabase;
    before(async () => {
      tdb = await openTestDatabase(backend);
    });
    after(async () => {
      await tdb?.drop();
    });

    /** A fresh chain, merchant and watcher; the first tick places the cursor at the current head. */
    async function withChain(fn: (e: { dev: DevChain; chain: ChainConfig; m: TestMerchant; w: ChainWatcher }) => Promise<void>, overrides: Partial<ChainConfig> = {}) {
      const dev = await startTestChain();
      try {
        const chain = chainConfigOf(dev, overrides);
        const m = await createMerchant(tdb.db, chain);
        const w = watcherFor(tdb.db, chain);
        await fn({ dev, chain, m, w });
      } finally {
        await dev.stop();
      }
    }

    it('matches a payment, confirms it at `confirmations`, invoices at finality and captures the fee', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        assert.equal((await tickOk(w)).kind, 'leader');
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 0), amount: 2_500_000n });
        const txHash = await pay(dev, 0, m.wallet, 2_500_000n);
        const block = await headNumber(dev);

        const t1 = await tickOk(w);
        assert.equal(t1.kind === 'leader' && t1.matched, 1);
        let o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'CHECKOUT_VERIFIED');
        assert.equal(o.tx_hash, txHash);
        assert.equal(BigInt(o.block_number!), block);
        assert.equal(o.paid_amount_wei, '2500000');
        assert.equal(o.confirmations, 1);
        assert.ok(o.payment_seen_at && o.block_hash && o.transfer_id);
        const [tr] = await transfersOf(db, chain.chainId);
        assert.equal(tr!.match_status, 'matched');
        assert.equal(tr!.order_id, order.id);
        assert.equal(tr!.id, o.transfer_id);
        assert.ok(tr!.block_timestamp instanceof Date);

        await mine(dev.rpcUrl, 1); // depth 2 = confirmations
        await tickOk(w);
        o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'PAYMENT_CONFIRMED');
        assert.equal(o.confirmations, 2);
        assert.ok(o.confirmed_at);

        await mine(dev.rpcUrl, 1); // depth 3: progress only
        await tickOk(w);
        o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'PAYMENT_CONFIRMED');
        assert.equal(o.confirmations, 3);

        await mine(dev.rpcUrl, 1); // depth 4 = finality
        const t4 = await tickOk(w);
        assert.equal(t4.kind === 'leader' && t4.invoiced, 1);
        o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'INVOICED');
        assert.equal(o.confirmations, 4);
        assert.ok(o.invoiced_at);

        assert.deepEqual(
          (await transitionsOf(db, order.id)).map((t) => [t.from_status, t.to_status, t.trigger]),
          [
            ['CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED', 'confirm'],
            ['PAYMENT_CONFIRMED', 'INVOICED', 'invoice'],
          ],
        );
        const bal = await getFeeBalance(db, m.id);
        assert.equal(bal!.captured, FEE);
        assert.equal(bal!.reserved, 0n);
        assert.deepEqual(await findLedgerImbalances(db), []);

        // More blocks change nothing any more.
        await mine(dev.rpcUrl, 3);
        await tickOk(w);
        assert.equal((await transitionsOf(db, order.id)).length, 2);
        const cursor = await readCursor(db, chain.chainId);
        assert.equal(cursor!.blockNumber, await headNumber(dev));
        assert.ok((await scannedThrough(db, chain.chainId)) instanceof Date);
      }));

    it('goes CHECKOUT_VERIFIED → INVOICED in one tick when the payment is already final', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 1), amount: 1_000_000n });
        await pay(dev, 1, m.wallet, 1_000_000n);
        await mine(dev.rpcUrl, chain.finalityConfirmations - 1);
        // First tick ever on this chain: the fresh cursor starts `finality` blocks back, which still covers the payment.
        const r = await tickOk(w);
        assert.equal(r.kind, 'leader');
        assert.equal(r.kind === 'leader' && r.invoiced, 1);
        const o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'INVOICED');
        assert.ok(o.confirmed_at && o.invoiced_at);
        assert.equal(o.confirmations, chain.finalityConfirmations);
        assert.deepEqual(
          (await transitionsOf(db, order.id)).map((t) => [t.from_status, t.to_status, t.trigger]),
          [['CHECKOUT_VERIFIED', 'INVOICED', 'invoice']],
        );
        assert.equal((await getFeeBalance(db, m.id))!.captured, FEE);
        assert.deepEqual(await findLedgerImbalances(db), []);
      }));

    it('picks the best fit among live orders of the payer and records an over-payment as paid', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        await tickOk(w);
        const from = payerAddress(dev, 2);
        const small = await createOrder(db, chain, m, { from, amount: 5_000_000n });
        const big = await createOrder(db, chain, m, { from, amount: 10_000_000n });
        const bigger = await createOrder(db, chain, m, { from, amount: 20_000_000n });
        await pay(dev, 2, m.wallet, 12_000_000n);
        await tickOk(w);
        const b = await getOrderRow(db, big.id);
        assert.ok(b.transfer_id);
        assert.equal(b.paid_amount_wei, '12000000');
        assert.equal((await getOrderRow(db, small.id)).transfer_id, null);
        assert.equal((await getOrderRow(db, bigger.id)).transfer_id, null);
        // A second payment of 5 goes to the remaining order it fits.
        await pay(dev, 2, m.wallet, 5_000_000n);
        await tickOk(w);
        assert.ok((await getOrderRow(db, small.id)).transfer_id);
        assert.equal((await getOrderRow(db, bigger.id)).transfer_id, null);
      }));

    it('records an under-payment against the order and never confirms it', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        await tickOk(w);
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 3), amount: 10_000_000n });
        await pay(dev, 3, m.wallet, 7_000_000n);
        await tickOk(w);
        await mine(dev.rpcUrl, chain.finalityConfirmations + 1);
        await tickOk(w);
        const o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'CHECKOUT_VERIFIED');
        assert.equal(o.transfer_id, null);
        assert.equal(o.paid_amount_wei, null);
        const [tr] = await transfersOf(db, chain.chainId);
        assert.equal(tr!.match_status, 'underpaid');
        assert.equal(tr!.order_id, order.id);
        assert.equal(tr!.amount_wei, '7000000');
        assert.deepEqual(await transitionsOf(db, order.id), []);
        assert.equal((await getFeeBalance(db, m.id))!.captured, 0n);
      }));

    it('records a payment mined after expires_at, and one to an expired order, as late', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        await tickOk(w);
        // (a) live order, block timestamp after its expiry (the sweeper has not run yet)
        const expiresAt = new Date(Date.now() + 600_000);
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 4), amount: 3_000_000n, expiresAt });
        await rpcRequest(dev.rpcUrl, 'evm_setNextBlockTimestamp', [Math.floor(expiresAt.getTime() / 1000) + 60]);
        await pay(dev, 4, m.wallet, 3_000_000n);
        await tickOk(w);
        await mine(dev.rpcUrl, chain.finalityConfirmations);
        await tickOk(w);
        let o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'CHECKOUT_VERIFIED');
        assert.equal(o.transfer_id, null);
        let trs = await transfersOf(db, chain.chainId);
        assert.equal(trs.length, 1);
        assert.equal(trs[0]!.match_status, 'late');
        assert.equal(trs[0]!.order_id, order.id);
        assert.ok(trs[0]!.block_timestamp!.getTime() > expiresAt.getTime());

        // (b) the order expired (sweeper) and the payer pays anyway
        const expired = await createOrder(db, chain, m, { from: payerAddress(dev, 5), amount: 4_000_000n });
        await db.transaction((tx) => transitionOrder(tx, { orderId: expired.id, from: 'CHECKOUT_VERIFIED', trigger: 'expire' }));
        await pay(dev, 5, m.wallet, 4_000_000n);
        await tickOk(w);
        trs = await transfersOf(db, chain.chainId);
        assert.equal(trs.length, 2);
        assert.equal(trs[1]!.match_status, 'late');
        assert.equal(trs[1]!.order_id, expired.id);
        o = await getOrderRow(db, expired.id);
        assert.equal(o.status, 'EXPIRED');
        assert.equal(o.transfer_id, null);
        assert.deepEqual(await findLedgerImbalances(db), []);
      }));

    it('records a transfer with no order as unmatched and ignores transfers to other addresses', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        await tickOk(w);
        await pay(dev, 6, m.wallet, 1_234_567n, 'USDT');
        await pay(dev, 6, randomAddress(), 1_000_000n); // not a merchant wallet: not even recorded
        await tickOk(w);
        const trs = await transfersOf(db, chain.chainId);
        assert.equal(trs.length, 1);
        assert.equal(trs[0]!.match_status, 'unmatched');
        assert.equal(trs[0]!.order_id, null);
        assert.equal(trs[0]!.from_address, payerAddress(dev, 6));
        assert.equal(trs[0]!.to_address, m.wallet);
        // Idempotent: ticking again over the same blocks records nothing new.
        await tickOk(w);
        assert.equal((await transfersOf(db, chain.chainId)).length, 1);
      }));

    it('never lets a transfer made before the order existed pay it (catch-up after downtime)', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        await tickOk(w);
        // The watcher is down: the payer sends the merchant 2.3 USDC for something else; minutes
        // later the merchant creates an order for that payer and amount; then the watcher catches up.
        await pay(dev, 1, m.wallet, 2_300_000n);
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 1), amount: 2_300_000n });
        await db.query(`UPDATE orders SET created_at = now() + interval '5 minutes' WHERE id = $1`, [order.id]);
        await tickOk(w);
        const o = await getOrderRow(db, order.id);
        assert.equal(o.status, 'CHECKOUT_VERIFIED');
        assert.equal(o.transfer_id, null, 'the earlier transfer did not pay the later order');
        const trs = await transfersOf(db, chain.chainId);
        assert.deepEqual(
          trs.map((t) => [t.match_status, t.order_id]),
          [['unmatched', null]],
        );
        // A payment made after the order was created pays it.
        await db.query(`UPDATE orders SET created_at = now() WHERE id = $1`, [order.id]);
        await pay(dev, 1, m.wallet, 2_300_000n);
        await tickOk(w);
        assert.ok((await getOrderRow(db, order.id)).transfer_id);
      }));

    it('still watches the old wallet of live orders after the merchant replaced it', () =>
      withChain(async ({ dev, chain, m, w }) => {
        const db = tdb.db;
        await tickOk(w);
        const order = await createOrder(db, chain, m, { from: payerAddress(dev, 8), amount: 2_200_000n });
        await db.query('UPDATE merchant_wallets SET address = $2 WHERE merchant_id = $1', [m.id, randomAddress()]);
        await pay(dev, 8, m.wallet, 2_200_000n);
        await tickOk(w);
        assert.ok((await getOrderRow(db, order.id)).transfer_id);
      }));

    it('watches a wallet added after the watcher started', () =>
      withChain(async ({ dev, chain, w }) => {
        const db = tdb.db;
        await tickOk(w);
        const late = await createMerchant(db, chain);
        const order = await createOrder(db, chain, late, { from: payerAddress(dev, 7), amount: 2_000_000n });
        await pay(dev, 7, late.wallet, 2_000_000n);
        await tickOk(w);
        assert.ok((await getOrderRow(db, order.id)).transfer_id);
      }));
  });
}
