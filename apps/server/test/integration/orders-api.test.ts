import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findLedgerImbalances, getFeeBalance } from '../../src/fees/ledger.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, MERCHANT_WALLET, PAYER, PAYER_2, setupMerchant } from '../helpers/orders.ts';
import { fakeChain, startTestServer, type Creds, type TestServer } from '../helpers/server.ts';

/** Order API rules that need no chain: validation, 402 terms, duplicates, fees, cancel, expiry. */
for (const backend of backends()) {
  describe(`orders API (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    /** What the watcher records after scanning: chain time has reached `at`. */
    const setScannedChainTime = (at: Date) =>
      s.db.query(
        `INSERT INTO chain_cursors (chain_id, block_number, block_hash, block_timestamp) VALUES (31337, 1, '0x' || repeat('0', 64), $1)
        ON CONFLICT (chain_id) DO UPDATE SET block_timestamp = EXCLUDED.block_timestamp`,
        [at],
      );
    const orderCount = async () => Number((await s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]!.n);

    before(async () => {
      s = await startTestServer({ backend, chains: [fakeChain()] });
      m = await setupMerchant(s);
    });
    after(() => s.close());

    it('creates an order: 402 with the x402 body and the PAYMENT-REQUIRED header', async () => {
      const body = buildOrderBody({ amount_wei: '2500000' });
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body });
      assert.equal(r.status, 402, r.text);
      const t = r.body;
      assert.equal(t.x402Version, 2);
      assert.match(t.order_id, /^ord_/);
      assert.equal(t.flow, 'ERC20_DIRECT');
      assert.equal(t.token_symbol, 'USDC');
      assert.equal(t.resource.url, `http://127.0.0.1:8402/api/v1/orders/${t.order_id}`);
      assert.equal(t.resource.mimeType, 'application/json');
      const a = t.accepts[0];
      assert.equal(t.accepts.length, 1);
      assert.deepEqual(
        { scheme: a.scheme, network: a.network, amount: a.amount, asset: a.asset, payTo: a.payTo, extra: a.extra },
        { scheme: 'exact', network: 'eip155:31337', amount: '2500000', asset: fakeChain().tokens[0]!.address, payTo: MERCHANT_WALLET, extra: { flow: 'ERC20_DIRECT', tokenSymbol: 'USDC', decimals: 6 } },
      );
      assert.ok(a.maxTimeoutSeconds > 590 && a.maxTimeoutSeconds <= 600);
      assert.equal(t.extensions.paymentTerms.destinationChain, 'eip155:31337');
      assert.equal(t.extensions.paymentTerms.paymentMethod, 'transfer');
      assert.equal(t.extensions.paymentTerms.receiveType, 'DIRECT');
      assert.equal(t.extensions.paymentTerms.expiresAt, Math.floor(s.clock.now() / 1000) + 600);
      assert.equal(t.calldata_sign_request, undefined);
      const header = JSON.parse(Buffer.from(r.headers.get('payment-required')!, 'base64').toString('utf8'));
      assert.deepEqual(header, t);
      // The header carries the very bytes of the body, which is JSON.
      assert.equal(Buffer.from(r.headers.get('payment-required')!, 'base64').toString('utf8'), r.text);
      assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');

      const st = await s.signed(m, 'GET', `/api/v1/orders/${t.order_id}`);
      assert.equal(st.status, 200);
      assert.equal(st.body.status, 'CHECKOUT_VERIFIED');
      assert.equal(st.body.dapp_order_id, body.dapp_order_id);
      assert.equal(st.body.from_address, PAYER);
      assert.equal(st.body.pay_to_address, MERCHANT_WALLET);
      assert.equal(st.body.amount_wei, '2500000');
      assert.equal(st.body.tx_hash, undefined, 'unknown fields are absent, never null');
      assert.equal(Object.values(st.body).includes(null), false);
    });

    it('reserves the per-order fee in the same transaction', async () => {
      const before = (await getFeeBalance(s.db, m.merchantId))!;
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() });
      assert.equal(r.status, 402);
      const after = (await getFeeBalance(s.db, m.merchantId))!;
      assert.equal(before.available - after.available, 10_000n);
      assert.equal(after.reserved - before.reserved, 10_000n);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });

    const bad: [string, Record<string, unknown>, number, string, string?][] = [
      ['unknown chain', { chain_id: 1 }, 400, 'chain_not_supported', 'chain_id'],
      ['unknown token', { token_symbol: 'DAI' }, 400, 'token_not_supported', 'token_symbol'],
      ['token_contract not matching the symbol', { token_contract: fakeChain().tokens[1]!.address }, 400, 'invalid_request', 'token_contract'],
      ['bad from_address', { from_address: '0x1234' }, 400, 'invalid_request', 'from_address'],
      ['bad EIP-55 checksum', { from_address: '0x70997970C51812dc3A010C7d01b50e0d17dc79c8'.replace('C5', 'c5') }, 400, 'invalid_request', 'from_address'],
      ['zero amount', { amount_wei: '0' }, 400, 'invalid_amount', 'amount_wei'],
      ['decimal amount', { amount_wei: '1.5' }, 400, 'invalid_amount', 'amount_wei'],
      ['negative amount', { amount_wei: '-5' }, 400, 'invalid_amount', 'amount_wei'],
      ['amount above uint256', { amount_wei: (2n ** 256n).toString() }, 400, 'invalid_amount', 'amount_wei'],
      ['numeric amount', { amount_wei: 1000 }, 400, 'invalid_request', 'amount_wei'],
      ['callback_calldata for a DIRECT merchant', { callback_calldata: '0xdeadbeef' }, 400, 'invalid_request', 'callback_calldata'],
      ['another merchant_id', { merchant_id: 'someone-else' }, 403, 'merchant_mismatch', 'merchant_id'],
      ['missing dapp_order_id', { dapp_order_id: undefined }, 400, 'invalid_request', 'dapp_order_id'],
      ['chain_id as a string', { chain_id: '31337' }, 400, 'invalid_request', 'chain_id'],
      ['unknown field', { colour: 'blue' }, 400, 'invalid_request', 'colour'],
    ];
    for (const [name, override, status, code, param] of bad) {
      it(`refuses ${name} (${status} ${code}) and writes nothing`, async () => {
        const n = await orderCount();
        const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody(override) });
        assert.equal(r.status, status, r.text);
        assert.equal(r.body.code, code);
        if (param) assert.equal(r.body.param, param);
        assert.equal(await orderCount(), n);
      });
    }

    it('accepts its own merchant_id and an EIP-55 address', async () => {
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ merchant_id: m.merchantId, from_address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }) });
      assert.equal(r.status, 402, r.text);
    });

    it('refuses a duplicate dapp_order_id with 409 and does not return the original', async () => {
      const body = buildOrderBody();
      assert.equal((await s.signed(m, 'POST', '/api/v1/orders', { body })).status, 402);
      const again = await s.signed(m, 'POST', '/api/v1/orders', { body: { ...body, amount_wei: '777' } });
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'order_already_exists');
      assert.equal(again.body.order_id, undefined);
      assert.equal(again.body.accepts, undefined);
    });

    it('refuses a second live order with the same payer, pay-to, token and amount (409)', async () => {
      const first = buildOrderBody({ amount_wei: '4242' });
      assert.equal((await s.signed(m, 'POST', '/api/v1/orders', { body: first })).status, 402);
      const clash = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: '4242' }) });
      assert.equal(clash.status, 409);
      assert.equal(clash.body.code, 'order_conflict');
      // another payer or another amount is fine
      assert.equal((await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: '4242', from_address: PAYER_2 }) })).status, 402);
      assert.equal((await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: '4243' }) })).status, 402);
    });

    it('refuses creation with 400 insufficient_fee_balance and reserves nothing', async () => {
      const poor = await setupMerchant(s, { topUp: '0.015', name: 'Poor' });
      assert.equal((await s.signed(poor, 'POST', '/api/v1/orders', { body: buildOrderBody() })).status, 402);
      const r = await s.signed(poor, 'POST', '/api/v1/orders', { body: buildOrderBody() });
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 'insufficient_fee_balance');
      const b = (await getFeeBalance(s.db, poor.merchantId))!;
      assert.deepEqual([b.available, b.reserved], [5_000n, 10_000n]);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });

    it('never shows one merchant another merchant’s order (404)', async () => {
      const other = await setupMerchant(s, { name: 'Other' });
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() });
      const id = r.body.order_id;
      for (const [method, path] of [
        ['GET', `/api/v1/orders/${id}`],
        ['GET', `/api/v1/orders/${id}/proof`],
        ['POST', `/api/v1/orders/${id}/cancel`],
      ] as const) {
        const x = await s.signed(other, method, path, method === 'POST' ? { body: {} } : {});
        assert.equal(x.status, 404, `${method} ${path}`);
        assert.equal(x.body.code, 'order_not_found');
      }
      assert.equal((await s.signed(m, 'GET', `/api/v1/orders/${id}`)).body.status, 'CHECKOUT_VERIFIED');
    });

    it('proof is 404 proof_not_available before a payment is confirmed', async () => {
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() });
      const p = await s.signed(m, 'GET', `/api/v1/orders/${r.body.order_id}/proof`);
      assert.equal(p.status, 404);
      assert.equal(p.body.code, 'proof_not_available');
    });

    it('cancels a CHECKOUT_VERIFIED order, releases the fee, and refuses a second cancel naming the state', async () => {
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() });
      const id = r.body.order_id;
      const before = (await getFeeBalance(s.db, m.merchantId))!;
      const c = await s.signed(m, 'POST', `/api/v1/orders/${id}/cancel`, { body: {} });
      assert.equal(c.status, 200, c.text);
      assert.equal(c.body.status, 'CANCELLED');
      const after = (await getFeeBalance(s.db, m.merchantId))!;
      assert.equal(after.available - before.available, 10_000n);
      assert.equal(before.reserved - after.reserved, 10_000n);
      const again = await s.signed(m, 'POST', `/api/v1/orders/${id}/cancel`);
      assert.equal(again.status, 400);
      assert.equal(again.body.code, 'order_not_cancellable');
      assert.match(again.body.error, /CANCELLED/);
      const audit = await s.db.query<{ from_status: string | null; to_status: string; trigger: string }>('SELECT from_status, to_status, trigger FROM order_transitions WHERE order_id = $1 ORDER BY id', [id]);
      assert.deepEqual(audit.rows, [
        { from_status: null, to_status: 'CHECKOUT_VERIFIED', trigger: 'create' },
        { from_status: 'CHECKOUT_VERIFIED', to_status: 'CANCELLED', trigger: 'cancel' },
      ]);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });

    it('expires an unpaid order past expires_at and releases its fee', async () => {
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() });
      const id = r.body.order_id;
      assert.equal(await s.tg.deps.orders.expireDue(), 0);
      s.clock.advance(601);
      try {
        // Past expiry by the clock, but the watcher has not scanned chain time past it: no expiry.
        assert.equal(await s.tg.deps.orders.expireDue(), 0);
        await setScannedChainTime(new Date(s.clock.now()));
        assert.ok((await s.tg.deps.orders.expireDue()) >= 1);
      } finally {
        s.clock.advance(-601);
        await s.db.query('DELETE FROM chain_cursors');
      }
      const st = await s.signed(m, 'GET', `/api/v1/orders/${id}`);
      assert.equal(st.body.status, 'EXPIRED');
      const c = await s.signed(m, 'POST', `/api/v1/orders/${id}/cancel`, { body: {} });
      assert.equal(c.status, 400);
      assert.match(c.body.error, /EXPIRED/);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });

    it('does not expire an order whose payment was seen before expiry', async () => {
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody() });
      const id = r.body.order_id;
      // what the watcher records when it matches a transfer
      await s.db.query(`UPDATE orders SET transfer_id = 1, tx_hash = '0x' || repeat('a', 64), payment_seen_at = now() WHERE id = $1`, [id]);
      s.clock.advance(3600);
      try {
        await setScannedChainTime(new Date(s.clock.now()));
        await s.tg.deps.orders.expireDue();
      } finally {
        s.clock.advance(-3600);
        await s.db.query('DELETE FROM chain_cursors');
      }
      assert.equal((await s.signed(m, 'GET', `/api/v1/orders/${id}`)).body.status, 'CHECKOUT_VERIFIED');
      const c = await s.signed(m, 'POST', `/api/v1/orders/${id}/cancel`, { body: {} });
      assert.equal(c.status, 400, 'a seen payment makes the order uncancellable');
    });
  });
}
