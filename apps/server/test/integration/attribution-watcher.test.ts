// Attribution on a real anvil through the chain watcher, on every database backend (issue 12,
// docs/attribution.md): exact terms in any state first, tolerance, over- and under-payment,
// duplicates, and reorgs of recorded (late / under-) payments.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, reorg, rpcRequest, type DevChain } from '@tollgate/devchain';
import type { ChainConfig } from '../../src/config/schema.ts';
import type { ChainWatcher } from '../../src/chain/evm/watcher.ts';
import type { Queryable } from '../../src/db/database.ts';
import { findLedgerImbalances } from '../../src/fees/ledger.ts';
import { acceptPayment } from '../../src/orders/accept.ts';
import { getOrderWithTransfers } from '../../src/orders/transfers-repo.ts';
import { transitionOrder } from '../../src/orders/transition.ts';
import { orderStatusRecord } from '../../src/orders/views.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { chainConfigOf, createMerchant, createOrder, getOrderRow, pay, payerAddress, startTestChain, tickOk, transfersOf, watcherFor, type TestMerchant } from './watcher-fixtures.ts';

async function eventsOf(q: Queryable, orderId: string): Promise<{ event: string; payload: any }[]> {
  const { rows } = await q.query<{ event: string; payload: any }>('SELECT event, payload FROM webhook_events WHERE order_id = $1 ORDER BY seq', [orderId]);
  return rows.map((r) => ({ event: r.event, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));
}

async function recordOf(q: Queryable, m: TestMerchant, orderId: string) {
  const o = await getOrderWithTransfers(q, m.id, orderId);
  return orderStatusRecord(o!, o!.observed);
}

for (const backend of backends()) {
  describe(`attribution through the watcher (${backend})`, () => {
    let tdb: TestDatabase;
    let dev: DevChain;
    let chain: ChainConfig;
    let w: ChainWatcher;
    before(async () => {
      tdb = await openTestDatabase(backend);
      dev = await startTestChain();
      chain = chainConfigOf(dev); // confirmations 2, finality 4
      w = watcherFor(tdb.db, chain);
      await mine(dev.rpcUrl, 6); // room below the payments for a rewind
      await tickOk(w);
    });
    after(async () => {
      await dev?.stop();
      await tdb?.drop();
    });
    const db = () => tdb.db;
    const cancel = (id: string) => db().transaction((tx) => transitionOrder(tx, { orderId: id, from: 'CHECKOUT_VERIFIED', trigger: 'cancel' }));

    it('the reported bug: A 0.50 live, B 1.00 cancelled, 1.00 with B’s terms → late payment on B, A untouched', async () => {
      const m = await createMerchant(db(), chain);
      const from = payerAddress(dev, 0);
      const a = await createOrder(db(), chain, m, { from, amount: 500_000n });
      const b = await createOrder(db(), chain, m, { from, amount: 1_000_000n });
      await cancel(b.id);
      const hash = await pay(dev, 0, m.wallet, 1_000_000n);
      await tickOk(w);

      const aRow = await getOrderRow(db(), a.id);
      assert.equal(aRow.status, 'CHECKOUT_VERIFIED');
      assert.equal(aRow.transfer_id, null, 'A is not paid by B’s payment');
      assert.equal(aRow.paid_amount_wei, null);
      const [t] = (await transfersOf(db(), chain.chainId)).filter((x) => x.tx_hash === hash);
      assert.equal(t!.match_status, 'late');
      assert.equal(t!.order_id, b.id);

      const rec = await recordOf(db(), m, b.id);
      assert.equal(rec.status, 'CANCELLED');
      assert.equal(rec.needs_reconciliation, true);
      assert.equal(rec.observed_transfers?.length, 1);
      assert.deepEqual(
        { ...rec.observed_transfers![0], confirmations: undefined },
        {
          tx_hash: hash,
          log_index: rec.observed_transfers![0]!.log_index,
          block_number: Number(t!.block_number),
          from_address: from,
          amount_wei: '1000000',
          kind: 'late',
          orphaned: false,
          accepted: false,
          confirmations: undefined,
        },
      );
      const ev = (await eventsOf(db(), b.id)).filter((e) => e.event === 'order.late_payment');
      assert.equal(ev.length, 1);
      assert.equal(ev[0]!.payload.order_id, b.id);
      assert.equal(ev[0]!.payload.transfer.tx_hash, hash);
      assert.equal(ev[0]!.payload.needs_reconciliation, true);
      assert.deepEqual(await eventsOf(db(), a.id), [], 'nothing emitted for A');
    });

    it('over-payment pays the live order only when no order has the exact amount', async () => {
      const m = await createMerchant(db(), chain);
      const from = payerAddress(dev, 1);
      const a = await createOrder(db(), chain, m, { from, amount: 500_000n });
      await pay(dev, 1, m.wallet, 700_000n);
      await tickOk(w);
      const row = await getOrderRow(db(), a.id);
      assert.ok(row.transfer_id, 'matched');
      assert.equal(row.paid_amount_wei, '700000');
    });

    it('tolerance: short by no more than the merchant’s basis points pays; one unit more is an under-payment', async () => {
      const m = await createMerchant(db(), chain);
      await db().query('UPDATE merchants SET underpay_tolerance_bps = 50 WHERE id = $1', [m.id]);
      const from = payerAddress(dev, 2);
      const ok = await createOrder(db(), chain, m, { from, amount: 2_000_000n });
      const short = await createOrder(db(), chain, m, { from, amount: 3_000_000n, token: 'USDT' });
      await pay(dev, 2, m.wallet, 1_990_000n); // 0.5 % short of 2.00
      await pay(dev, 2, m.wallet, 2_984_999n, 'USDT'); // 0.5 % + 1 unit short of 3.00
      await tickOk(w);
      const okRow = await getOrderRow(db(), ok.id);
      assert.ok(okRow.transfer_id, 'tolerated under-payment pays');
      assert.equal(okRow.paid_amount_wei, '1990000');
      const shortRow = await getOrderRow(db(), short.id);
      assert.equal(shortRow.transfer_id, null);
      const rec = await recordOf(db(), m, short.id);
      assert.equal(rec.observed_transfers?.[0]?.kind, 'underpaid');
      assert.equal(rec.needs_reconciliation, true);
      assert.deepEqual(
        (await eventsOf(db(), short.id)).map((e) => e.event),
        ['order.underpaid'],
      );

      await mine(dev.rpcUrl, chain.finalityConfirmations);
      await tickOk(w);
      assert.equal((await getOrderRow(db(), ok.id)).status, 'INVOICED', 'a tolerated payment is invoiced like any other');
      assert.equal((await getOrderRow(db(), short.id)).status, 'CHECKOUT_VERIFIED', 'an under-payment never confirms by itself');
    });

    it('a second exact payment of a paid order is a duplicate against it, never an over-payment of another order', async () => {
      const m = await createMerchant(db(), chain);
      const from = payerAddress(dev, 3);
      const paid = await createOrder(db(), chain, m, { from, amount: 1_000_000n });
      await pay(dev, 3, m.wallet, 1_000_000n);
      await tickOk(w);
      const other = await createOrder(db(), chain, m, { from, amount: 400_000n });
      const again = await pay(dev, 3, m.wallet, 1_000_000n);
      await tickOk(w);
      assert.equal((await getOrderRow(db(), other.id)).transfer_id, null);
      const t = (await transfersOf(db(), chain.chainId)).find((x) => x.tx_hash === again)!;
      assert.equal(t.match_status, 'duplicate');
      assert.equal(t.order_id, paid.id);
      assert.deepEqual(
        (await eventsOf(db(), paid.id)).map((e) => e.event).filter((e) => e === 'order.duplicate_payment'),
        ['order.duplicate_payment'],
      );
      const rec = await recordOf(db(), m, paid.id);
      assert.equal(rec.needs_reconciliation, true);
    });

    it('an exact payment after expiry (block time past expires_at) is late against that order, not an over-payment of a live one', async () => {
      const m = await createMerchant(db(), chain);
      const from = payerAddress(dev, 4);
      const live = await createOrder(db(), chain, m, { from, amount: 100_000n });
      // Well past: anvil's block time is whole seconds of the wall clock, so an expiry one second
      // ago can equal the payment block's time on a loaded machine (CI saw exactly that).
      const expired = await createOrder(db(), chain, m, { from, amount: 900_000n, expiresAt: new Date(Date.now() - 30_000) });
      await pay(dev, 4, m.wallet, 900_000n);
      await tickOk(w);
      assert.equal((await getOrderRow(db(), live.id)).transfer_id, null);
      const t = (await transfersOf(db(), chain.chainId)).find((x) => x.order_id === expired.id)!;
      assert.equal(t.match_status, 'late');
    });

    it('a revived payment of an INVOICED order is that order’s again, never an over-payment of another live order', async () => {
      const m = await createMerchant(db(), chain);
      const from = payerAddress(dev, 6);
      const paid = await createOrder(db(), chain, m, { from, amount: 500_000n });
      const hash = await pay(dev, 6, m.wallet, 700_000n);
      await tickOk(w);
      await mine(dev.rpcUrl, chain.finalityConfirmations);
      await tickOk(w);
      assert.equal((await getOrderRow(db(), paid.id)).status, 'INVOICED');
      const live = await createOrder(db(), chain, m, { from, amount: 600_000n });

      // What a reorg deeper than finality leaves behind when the chain then switches back: the
      // transfer row orphaned (the INVOICED order keeps it) and its block scanned again.
      const t = (await transfersOf(db(), chain.chainId)).find((x) => x.tx_hash === hash)!;
      await db().query('UPDATE chain_transfers SET orphaned_at = now() WHERE id = $1', [t.id]);
      const below = Number(t.block_number) - 1;
      const blk = await rpcRequest<{ hash: string }>(dev.rpcUrl, 'eth_getBlockByNumber', [`0x${below.toString(16)}`, false]);
      await db().query('UPDATE chain_cursors SET block_number = $2, block_hash = $3 WHERE chain_id = $1', [chain.chainId, below, blk.hash]);
      await tickOk(w);

      const again = (await transfersOf(db(), chain.chainId)).find((x) => x.id === t.id)!;
      assert.equal(again.orphaned_at, null, 'revived');
      assert.equal(again.match_status, 'matched');
      assert.equal(again.order_id, paid.id);
      const liveRow = await getOrderRow(db(), live.id);
      assert.equal(liveRow.transfer_id, null, 'the live order is not paid by the invoiced order’s payment');
      assert.equal((await getOrderRow(db(), paid.id)).status, 'INVOICED');
      assert.deepEqual(await eventsOf(db(), live.id), []);
    });

    it('reorg: a recorded late and a recorded under-payment disappear (orphaned, no reconciliation, nothing to accept)', async () => {
      const m = await createMerchant(db(), chain);
      const from = payerAddress(dev, 5);
      const closed = await createOrder(db(), chain, m, { from, amount: 1_500_000n });
      await cancel(closed.id);
      const open = await createOrder(db(), chain, m, { from, amount: 5_000_000n, token: 'USDT' });
      await pay(dev, 5, m.wallet, 1_500_000n);
      await pay(dev, 5, m.wallet, 4_000_000n, 'USDT');
      await tickOk(w);
      assert.equal((await recordOf(db(), m, closed.id)).needs_reconciliation, true);
      assert.equal((await recordOf(db(), m, open.id)).needs_reconciliation, true);

      await reorg(dev.rpcUrl, 2); // both payments' blocks replaced by empty ones
      await tickOk(w);
      for (const id of [closed.id, open.id]) {
        const rec = await recordOf(db(), m, id);
        assert.equal(rec.needs_reconciliation, undefined, `${id}: nothing left to reconcile`);
        assert.equal(rec.observed_transfers?.length, 1);
        assert.equal(rec.observed_transfers![0]!.orphaned, true);
      }
      await mine(dev.rpcUrl, chain.finalityConfirmations + 2);
      await tickOk(w);
      const out = await acceptPayment(db(), { merchantId: m.id, orderId: closed.id, txRef: (_, raw) => raw, finality: () => ({ unit: 'blocks', needed: chain.finalityConfirmations }), now: new Date() });
      assert.equal(out.kind, 'nothing');
      assert.equal((await getOrderRow(db(), closed.id)).status, 'CANCELLED');
      assert.equal((await getOrderRow(db(), open.id)).status, 'CHECKOUT_VERIFIED');
      assert.deepEqual(await findLedgerImbalances(db()), []);
    });
  });
}
