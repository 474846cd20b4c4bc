// The rules migration 0005 re-expressed more cheaply (db/migrations/0005_create_path.sql) hold
// exactly as before, on both backends: the orders address CHECK without a regular expression, the
// live-terms uniqueness with its new column order, and byte-order ("C") identifier columns.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CHECK_VIOLATION, isPgError, pgConstraint, UNIQUE_VIOLATION, type Database } from '../../src/db/database.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';

const HEX40 = 'ab'.repeat(20);
const WALLET = `0x${'11'.repeat(20)}`;
const TOKEN = `0x${'aa'.repeat(20)}`;

for (const backend of backends()) {
  describe(`schema rules after migration 0005 (${backend})`, () => {
    let t: TestDatabase;
    let db: Database;
    let seq = 0;
    before(async () => {
      t = await openTestDatabase(backend);
      db = t.db;
      await db.exec(`INSERT INTO merchants (id, name) VALUES ('m_rules', 'Rules')`);
    });
    after(() => t.drop());

    const insert = (o: { from?: string; payTo?: string; token?: string; amount?: string; status?: string }) =>
      db.query(
        `INSERT INTO orders (id, merchant_id, dapp_order_id, flow, chain_id, pay_to_chain_id, token_symbol, token_contract, decimals,
           from_address, pay_to_address, amount_wei, fee_amount, status, expires_at)
         VALUES ($1, 'm_rules', $2, 'ERC20_DIRECT', 31337, 31337, 'USDC', $3, 6, $4, $5, $6, 0, $7, now() + interval '1 hour')`,
        [`ord_${randomBytes(8).toString('hex')}`, `rules-${++seq}`, o.token ?? TOKEN, o.from ?? `0x${HEX40}`, o.payTo ?? WALLET, o.amount ?? String(1000 + seq), o.status ?? 'CHECKOUT_VERIFIED'],
      );
    const refusedBy = async (p: Promise<unknown>, code: string, constraint: string) => {
      await assert.rejects(p, (err: unknown) => isPgError(err, code) && pgConstraint(err) === constraint);
    };

    it('accepts lowercase 0x-prefixed 40-digit hex in all three address columns', async () => {
      await insert({ from: `0x${'0123456789abcdef'.repeat(2)}01234567`, payTo: WALLET, token: TOKEN });
    });

    for (const [what, bad] of [
      ['uppercase hex', `0x${'AB'.repeat(20)}`],
      ['a checksummed address', '0x8Ba1f109551bD432803012645Ac136ddd64DBA72'],
      ['39 digits', `0x${HEX40.slice(1)}`],
      ['41 digits', `0x${HEX40}a`],
      ['a non-hex digit', `0x${HEX40.slice(1)}g`],
      ['no 0x prefix', `00${HEX40}`],
      ['an uppercase 0X prefix', `0X${HEX40}`],
      ['a multi-byte character of 42 bytes in all', `0x${HEX40.slice(2)}é`],
      ['an inner space', `0x${HEX40.slice(1)} `],
      ['empty', ''],
    ] as const) {
      it(`refuses ${what} in any address column (check violation, row not written)`, async () => {
        const before = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]!.n;
        await refusedBy(insert({ from: bad }), CHECK_VIOLATION, 'orders_addresses_lowercase');
        await refusedBy(insert({ payTo: bad }), CHECK_VIOLATION, 'orders_addresses_lowercase');
        await refusedBy(insert({ token: bad }), CHECK_VIOLATION, 'orders_addresses_lowercase');
        assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]!.n, before);
      });
    }

    it('two live orders with the same payer, pay-to, token and amount are refused; a closed one frees the terms', async () => {
      const from = `0x${'cd'.repeat(20)}`;
      await insert({ from, amount: '777' });
      await refusedBy(insert({ from, amount: '777' }), UNIQUE_VIOLATION, 'orders_live_terms_key');
      await insert({ from, amount: '778' }); // another amount is other terms
      await insert({ from, amount: '777', status: 'CANCELLED' }); // closed orders are not live
      await db.query(`UPDATE orders SET status = 'EXPIRED' WHERE from_address = $1 AND amount_wei = 777 AND status = 'CHECKOUT_VERIFIED'`, [from]);
      await insert({ from, amount: '777' });
    });

    it('identifier and address columns of the order-creation path compare in byte order (COLLATE "C")', async () => {
      const { rows } = await db.query<{ table_name: string; column_name: string; collation_name: string | null }>(
        `SELECT table_name, column_name, collation_name FROM information_schema.columns
          WHERE table_schema = current_schema() AND (table_name, column_name) IN (
            ('merchants', 'id'), ('api_keys', 'api_key'), ('request_nonces', 'api_key'), ('request_nonces', 'nonce'),
            ('fee_accounts', 'merchant_id'), ('fee_ledger', 'order_id'), ('order_transitions', 'order_id'),
            ('orders', 'id'), ('orders', 'merchant_id'), ('orders', 'dapp_order_id'), ('orders', 'from_address'),
            ('orders', 'pay_to_address'), ('orders', 'token_contract'))
          ORDER BY 1, 2`,
      );
      assert.equal(rows.length, 13);
      for (const r of rows) assert.equal(r.collation_name, 'C', `${r.table_name}.${r.column_name}`);
      // Byte order: uppercase before lowercase, whatever the database's default collation says.
      await db.exec(`INSERT INTO merchants (id, name) VALUES ('b', 'x'), ('B', 'x'), ('a', 'x')`);
      const { rows: ms } = await db.query<{ id: string }>(`SELECT id FROM merchants WHERE id IN ('a', 'b', 'B') ORDER BY id`);
      assert.deepEqual(
        ms.map((r) => r.id),
        ['B', 'a', 'b'],
      );
    });
  });
}
