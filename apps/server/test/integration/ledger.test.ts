import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { isPgError, UNIQUE_VIOLATION, CHECK_VIOLATION, type Database } from '../../src/db/database.ts';
import { captureFee, findLedgerImbalances, getFeeBalance, openFeeAccount, releaseFee, reserveFee, topUpFees, type FeeBalance } from '../../src/fees/ledger.ts';
import { MerchantService } from '../../src/merchants/service.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { buildConfig } from '../helpers/server.ts';

const UNIT = 10_000n; // 0.01 in micro-units: one order fee

function orderId(): string {
  return `ord_${randomBytes(8).toString('hex')}`;
}

function balance(available: bigint, reserved: bigint, captured: bigint): FeeBalance {
  return { available, reserved, captured };
}

async function ledgerRows(db: Database, merchantId: string) {
  const { rows } = await db.query<{ kind: string; from_account: string; to_account: string; amount: string; order_id: string | null }>('SELECT kind, from_account, to_account, amount, order_id FROM fee_ledger WHERE merchant_id = $1 ORDER BY id', [merchantId]);
  return rows;
}

for (const backend of backends()) {
  describe(`fee ledger (${backend})`, () => {
    let t: TestDatabase;
    let db: Database;
    let merchants: MerchantService;
    before(async () => {
      t = await openTestDatabase(backend);
      db = t.db;
      merchants = new MerchantService(db, buildConfig());
    });
    after(() => t.drop());

    /** A merchant created by the service (fee account opened), optionally topped up. */
    async function newMerchant(topUp = 0n): Promise<string> {
      const out = await merchants.createMerchant({ name: 'Ledger test' });
      assert.equal(out.kind, 'created');
      if (out.kind !== 'created') throw new Error('unreachable');
      if (topUp > 0n) assert.ok(await db.transaction((tx) => topUpFees(tx, out.merchantId, topUp)));
      return out.merchantId;
    }

    async function assertBalanced() {
      assert.deepEqual(await findLedgerImbalances(db), []);
    }

    it('a new account is zero and balanced', async () => {
      const m = await newMerchant();
      assert.deepEqual(await getFeeBalance(db, m), balance(0n, 0n, 0n));
      assert.deepEqual(await ledgerRows(db, m), []);
      await assertBalanced();
    });

    it('openFeeAccount is idempotent and keeps the balance', async () => {
      const m = await newMerchant(5n * UNIT);
      await openFeeAccount(db, m);
      await openFeeAccount(db, m);
      assert.deepEqual(await getFeeBalance(db, m), balance(5n * UNIT, 0n, 0n));
    });

    it('a merchant inserted by SQL gets an account with openFeeAccount', async () => {
      const id = `sql_${randomBytes(4).toString('hex')}`;
      await db.query(`INSERT INTO merchants (id, name) VALUES ($1, 'By SQL')`, [id]);
      assert.equal(await getFeeBalance(db, id), undefined);
      assert.equal(await topUpFees(db, id, UNIT), false, 'no account, no top-up');
      await openFeeAccount(db, id);
      assert.ok(await topUpFees(db, id, UNIT));
      assert.deepEqual(await getFeeBalance(db, id), balance(UNIT, 0n, 0n));
      await assertBalanced();
    });

    it('top_up, reserve, capture and release move balances and write one double-entry row each', async () => {
      const m = await newMerchant();
      const [o1, o2, o3] = [orderId(), orderId(), orderId()];
      await db.transaction(async (tx) => {
        assert.ok(await topUpFees(tx, m, 10n * UNIT));
      });
      assert.deepEqual(await getFeeBalance(db, m), balance(10n * UNIT, 0n, 0n));

      await db.transaction(async (tx) => {
        assert.ok(await reserveFee(tx, m, o1, UNIT));
        assert.ok(await reserveFee(tx, m, o2, 2n * UNIT));
        assert.ok(await reserveFee(tx, m, o3, 3n * UNIT));
      });
      assert.deepEqual(await getFeeBalance(db, m), balance(4n * UNIT, 6n * UNIT, 0n));
      await assertBalanced();

      await db.transaction(async (tx) => assert.ok(await captureFee(tx, m, o1, UNIT)));
      assert.deepEqual(await getFeeBalance(db, m), balance(4n * UNIT, 5n * UNIT, UNIT));
      await assertBalanced();

      await db.transaction(async (tx) => assert.ok(await releaseFee(tx, m, o2, 2n * UNIT)));
      assert.deepEqual(await getFeeBalance(db, m), balance(6n * UNIT, 3n * UNIT, UNIT));
      await assertBalanced();

      assert.deepEqual(await ledgerRows(db, m), [
        { kind: 'top_up', from_account: 'external', to_account: 'available', amount: String(10n * UNIT), order_id: null },
        { kind: 'reserve', from_account: 'available', to_account: 'reserved', amount: String(UNIT), order_id: o1 },
        { kind: 'reserve', from_account: 'available', to_account: 'reserved', amount: String(2n * UNIT), order_id: o2 },
        { kind: 'reserve', from_account: 'available', to_account: 'reserved', amount: String(3n * UNIT), order_id: o3 },
        { kind: 'capture', from_account: 'reserved', to_account: 'captured', amount: String(UNIT), order_id: o1 },
        { kind: 'release', from_account: 'reserved', to_account: 'available', amount: String(2n * UNIT), order_id: o2 },
      ]);
    });

    it('amounts beyond 2^53 and up to numeric(78,0) stay exact', async () => {
      const m = await newMerchant();
      const big = 2n ** 200n + 1n;
      assert.ok(await topUpFees(db, m, big));
      const o = orderId();
      assert.ok(await db.transaction((tx) => reserveFee(tx, m, o, big - 1n)));
      assert.deepEqual(await getFeeBalance(db, m), balance(1n, big - 1n, 0n));
      await assertBalanced();
    });

    it('reserving beyond the available balance returns false and writes no ledger row', async () => {
      const m = await newMerchant(2n * UNIT);
      const before = await ledgerRows(db, m);
      const ok = await db.transaction((tx) => reserveFee(tx, m, orderId(), 2n * UNIT + 1n));
      assert.equal(ok, false);
      assert.deepEqual(await ledgerRows(db, m), before);
      assert.deepEqual(await getFeeBalance(db, m), balance(2n * UNIT, 0n, 0n));
      // Exactly the available balance is fine.
      assert.ok(await db.transaction((tx) => reserveFee(tx, m, orderId(), 2n * UNIT)));
      assert.deepEqual(await getFeeBalance(db, m), balance(0n, 2n * UNIT, 0n));
      assert.equal(await db.transaction((tx) => reserveFee(tx, m, orderId(), 1n)), false);
      await assertBalanced();
    });

    it('capturing or releasing more than reserved returns false and writes nothing', async () => {
      const m = await newMerchant(5n * UNIT);
      const o = orderId();
      assert.ok(await db.transaction((tx) => reserveFee(tx, m, o, UNIT)));
      const before = await ledgerRows(db, m);
      assert.equal(await db.transaction((tx) => captureFee(tx, m, o, UNIT + 1n)), false);
      assert.equal(await db.transaction((tx) => releaseFee(tx, m, o, UNIT + 1n)), false);
      assert.deepEqual(await ledgerRows(db, m), before);
      assert.deepEqual(await getFeeBalance(db, m), balance(4n * UNIT, UNIT, 0n));
      await assertBalanced();
    });

    it('an unknown merchant: every movement returns false', async () => {
      for (const fn of [(tx: Database) => topUpFees(tx, 'nobody', UNIT), (tx: Database) => reserveFee(tx, 'nobody', orderId(), UNIT), (tx: Database) => captureFee(tx, 'nobody', orderId(), UNIT), (tx: Database) => releaseFee(tx, 'nobody', orderId(), UNIT)]) {
        assert.equal(await fn(db), false);
      }
      assert.equal(await getFeeBalance(db, 'nobody'), undefined);
    });

    it('a zero or negative amount is a programming error (RangeError), nothing written', async () => {
      const m = await newMerchant(UNIT);
      const before = await ledgerRows(db, m);
      for (const amount of [0n, -1n, -UNIT]) {
        await assert.rejects(topUpFees(db, m, amount), RangeError);
        await assert.rejects(reserveFee(db, m, orderId(), amount), RangeError);
        await assert.rejects(captureFee(db, m, orderId(), amount), RangeError);
        await assert.rejects(releaseFee(db, m, orderId(), amount), RangeError);
      }
      assert.deepEqual(await ledgerRows(db, m), before);
      assert.deepEqual(await getFeeBalance(db, m), balance(UNIT, 0n, 0n));
    });

    it('one order cannot reserve twice: the unique index throws and the transaction rolls back', async () => {
      const m = await newMerchant(5n * UNIT);
      const o = orderId();
      assert.ok(await db.transaction((tx) => reserveFee(tx, m, o, UNIT)));
      await assert.rejects(
        db.transaction((tx) => reserveFee(tx, m, o, UNIT)),
        (err: unknown) => {
          assert.ok(isPgError(err, UNIQUE_VIOLATION), `expected a unique violation (23505), got ${String((err as { code?: string }).code)} ${String(err)}`);
          return true;
        },
      );
      assert.deepEqual(await getFeeBalance(db, m), balance(4n * UNIT, UNIT, 0n), 'the second reserve left no trace');
      assert.equal((await ledgerRows(db, m)).filter((r) => r.kind === 'reserve').length, 1);
      await assertBalanced();
    });

    it('one order captures at most once, and releases at most once', async () => {
      const m = await newMerchant(5n * UNIT);
      const o = orderId();
      assert.ok(await db.transaction((tx) => reserveFee(tx, m, o, 2n * UNIT)));
      assert.ok(await db.transaction((tx) => captureFee(tx, m, o, UNIT)));
      await assert.rejects(
        db.transaction((tx) => captureFee(tx, m, o, UNIT)),
        (err) => isPgError(err, UNIQUE_VIOLATION),
      );
      const o2 = orderId();
      assert.ok(await db.transaction((tx) => reserveFee(tx, m, o2, UNIT)));
      assert.ok(await db.transaction((tx) => releaseFee(tx, m, o2, UNIT)));
      await assert.rejects(
        db.transaction((tx) => releaseFee(tx, m, o2, UNIT)),
        (err) => isPgError(err, UNIQUE_VIOLATION),
      );
      await assertBalanced();
    });

    it('an order id is global: another merchant cannot reserve under it', async () => {
      // Order ids are random and global (ord_ + randomness, packages/protocol/src/ids.ts); the unique index is on (order_id, kind).
      const a = await newMerchant(UNIT);
      const b = await newMerchant(UNIT);
      const o = orderId();
      assert.ok(await db.transaction((tx) => reserveFee(tx, a, o, UNIT)));
      await assert.rejects(
        db.transaction((tx) => reserveFee(tx, b, o, UNIT)),
        (err) => isPgError(err, UNIQUE_VIOLATION),
      );
      assert.deepEqual(await getFeeBalance(db, b), balance(UNIT, 0n, 0n));
    });

    it('the CHECK constraints forbid a negative balance even for a direct UPDATE', async () => {
      const m = await newMerchant(UNIT);
      await assert.rejects(db.query('UPDATE fee_accounts SET available = available - $2::numeric WHERE merchant_id = $1', [m, String(2n * UNIT)]), (err) => isPgError(err, CHECK_VIOLATION));
      assert.deepEqual(await getFeeBalance(db, m), balance(UNIT, 0n, 0n));
    });

    it('findLedgerImbalances reports a balance changed without a ledger row', async () => {
      const m = await newMerchant(3n * UNIT);
      await assertBalanced();
      await db.query('UPDATE fee_accounts SET available = available + 7 WHERE merchant_id = $1', [m]);
      assert.deepEqual(await findLedgerImbalances(db), [{ merchantId: m, account: 'available', ledger: String(3n * UNIT), balance: String(3n * UNIT + 7n) }]);
      await db.query('UPDATE fee_accounts SET available = available - 7 WHERE merchant_id = $1', [m]);
      await assertBalanced();

      // A ledger row without its balance change is caught too, on both accounts it touches.
      const o = orderId();
      await db.query(`INSERT INTO fee_ledger (merchant_id, kind, from_account, to_account, amount, order_id) VALUES ($1, 'reserve', 'available', 'reserved', $2, $3)`, [m, String(UNIT), o]);
      const found = await findLedgerImbalances(db);
      assert.deepEqual(found.map((f) => [f.merchantId, f.account, f.ledger, f.balance]).sort(), [
        [m, 'available', String(2n * UNIT), String(3n * UNIT)],
        [m, 'reserved', String(UNIT), '0'],
      ]);
      await db.query('DELETE FROM fee_ledger WHERE order_id = $1', [o]);
      await assertBalanced();
    });

    it('concurrent reserves never overdraw: 50 × 1 unit against 20 units', async () => {
      const m = await newMerchant(20n * UNIT);
      const results = await Promise.all(Array.from({ length: 50 }, () => db.transaction((tx) => reserveFee(tx, m, orderId(), UNIT))));
      assert.equal(results.filter(Boolean).length, 20);
      assert.deepEqual(await getFeeBalance(db, m), balance(0n, 20n * UNIT, 0n));
      assert.equal((await ledgerRows(db, m)).filter((r) => r.kind === 'reserve').length, 20);
      await assertBalanced();
    });

    it('concurrent mixed flows keep the books balanced', async () => {
      const m = await newMerchant(30n * UNIT);
      const orders = Array.from({ length: 30 }, () => orderId());
      await Promise.all(orders.map((o) => db.transaction((tx) => reserveFee(tx, m, o, UNIT))));
      await Promise.all([
        ...orders.slice(0, 10).map((o) => db.transaction((tx) => captureFee(tx, m, o, UNIT))),
        ...orders.slice(10, 20).map((o) => db.transaction((tx) => releaseFee(tx, m, o, UNIT))),
        ...Array.from({ length: 10 }, () => db.transaction((tx) => topUpFees(tx, m, UNIT))),
      ]);
      assert.deepEqual(await getFeeBalance(db, m), balance(20n * UNIT, 10n * UNIT, 10n * UNIT));
      await assertBalanced();
    });
  });
}
