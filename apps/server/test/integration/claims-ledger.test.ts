// One payment, one purpose (issue 24, docs/attribution.md "One transfer, one purpose"): where a
// machine payment, an x402 settlement and a DIRECT order meet on one merchant wallet, one payer and
// one transfer, the transfer is claimed once, by the purpose the precedence rule names, and no other
// purpose records it, pays with it or sends an event for it. Real anvil, the watcher and the
// gateway's HTTP doors on one database; PGlite and Postgres.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Mppx } from 'mppx/client';
import { evm } from 'mppx/evm/client';
import { privateKeyToAccount } from 'viem/accounts';
import { after, before, describe, it } from 'node:test';
import type { Hex } from 'viem';
import type { ChainConfig } from '../../src/config/schema.ts';
import type { ChainWatcher } from '../../src/chain/evm/watcher.ts';
import { acceptPayment } from '../../src/orders/accept.ts';
import { backends } from '../helpers/db.ts';
import { addPortalUser, PortalClient } from '../helpers/portal.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/server.ts';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { challenge, finalize, FINALITY, pay, PRICE, ROUTE, startMppStack, verify, type MppStack } from './mpp-fixtures.ts';
import { chainConfigOf, createOrder, getOrderRow, tickOk, watcherFor, type TestMerchant } from './watcher-fixtures.ts';
import { USDC_DOMAIN, x402Body } from './x402-fixtures.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { mine } from '@tollgate/devchain';

for (const backend of backends()) {
  describe(`claims ledger across rails (${backend})`, () => {
    let st: MppStack;
    let chain: ChainConfig;
    let w: ChainWatcher;
    let m: TestMerchant;
    let payer: Hex;
    let seq = 0;
    before(async () => {
      st = await startMppStack(backend, { settle: true });
      chain = chainConfigOf(st.dev, { confirmations: 1, finalityConfirmations: FINALITY, pollIntervalMs: 1000 });
      w = watcherFor(st.s.db, chain, { holderId: `claims-ledger-${backend}` });
      m = { id: st.m.merchantId, wallet: MERCHANT_WALLET as Hex };
      payer = st.dev.payers[0]!.address.toLowerCase() as Hex;
      await tickOk(w);
    });
    after(() => st?.close());

    /** A route of its own with price `amount` (terms distinct from every other test's). */
    const pricedChallenge = async (amount: bigint) => {
      const route = `GET:api:ledger${++seq}`;
      const p = await st.s.signed(st.m, 'PUT', `/api/v1/mpp/routes/${route}`, { body: { amount_wei: amount.toString(), chain_id: st.dev.chainId, token_symbol: 'USDC' } });
      assert.equal(p.status, 200, p.text);
      st.s.clock.ms = Date.now();
      const r = await st.s.request('POST', '/mpp/v1/challenge', { body: { merchant_id: st.m.merchantId, route_canonical: route, request_canonical: route, payer_addr: payer } });
      assert.equal(r.status, 402, r.text);
      return r.body as { challenge_id: string; mac: string; recipient: string };
    };
    const verifyTx = (c: { challenge_id: string; mac: string }, tx: string) => {
      st.s.clock.ms = Date.now();
      return verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac });
    };
    const claimsOf = async (tx: string) => (await st.s.db.query<{ log_index: number; purpose: string; purpose_id: string }>('SELECT log_index, purpose, purpose_id FROM transfer_claims WHERE tx_ref = $1 ORDER BY log_index', [tx])).rows;
    const transferOf = async (tx: string) => (await st.s.db.query<{ match_status: string; order_id: string | null }>('SELECT match_status, order_id FROM chain_transfers WHERE tx_hash = $1 AND orphaned_at IS NULL', [tx])).rows;
    const orderEvents = async (orderId: string) => (await st.s.db.query<{ event: string }>('SELECT event FROM webhook_events WHERE order_id = $1 ORDER BY seq', [orderId])).rows.map((r) => r.event);
    const mppEvents = async (challengeId: string) => (await st.s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_events WHERE event = 'mpp.payment.confirmed' AND payload->>'challenge_id' = $1`, [challengeId])).rows[0]!.n;
    const expiredOrder = (amount: bigint) => createOrder(st.s.db, chain, m, { from: payer, amount, expiresAt: new Date(Date.now() - 60_000) });

    it('a live order with exactly these terms outranks a challenge: the verify is refused (409 tx_already_claimed), the watcher pays the order, one claim', async () => {
      const amount = 1_100_000n;
      const order = await createOrder(st.s.db, chain, m, { from: payer, amount });
      const c = await pricedChallenge(amount);
      const tx = await pay(st, 0, MERCHANT_WALLET, amount);
      await finalize(st);
      const r = await verifyTx(c, tx);
      assert.deepEqual([r.status, r.body.code], [409, 'tx_already_claimed'], r.text);
      await tickOk(w);
      const o = await getOrderRow(st.s.db, order.id);
      assert.equal(o.tx_hash, tx, 'the order is paid by the transfer');
      assert.deepEqual(await claimsOf(tx), [{ log_index: o.log_index, purpose: 'order', purpose_id: order.id }]);
      assert.equal(await mppEvents(c.challenge_id), 0);
      // The refused challenge is exactly as it was: open, payable by another transfer.
      const again = await pay(st, 0, MERCHANT_WALLET, amount + 1n);
      await finalize(st);
      assert.equal((await verifyTx(c, again)).status, 200);
    });

    it('watcher first: a transfer that pays a challenge issued to its payer is never a late payment of the payer’s expired order; the verify then claims it', async () => {
      const amount = 1_200_000n;
      const order = await expiredOrder(amount);
      const c = await pricedChallenge(amount);
      const tx = await pay(st, 0, MERCHANT_WALLET, amount);
      await tickOk(w);
      assert.deepEqual(await transferOf(tx), [{ match_status: 'unmatched', order_id: null }]);
      assert.deepEqual(await claimsOf(tx), []);
      await finalize(st);
      const r = await verifyTx(c, tx);
      assert.equal(r.status, 200, r.text);
      await tickOk(w);
      assert.deepEqual(
        (await claimsOf(tx)).map((x) => [x.purpose, x.purpose_id]),
        [['mpp_challenge', c.challenge_id]],
      );
      assert.deepEqual(await orderEvents(order.id), [], 'no order.late_payment for a transfer that bought an API call');
      assert.equal(await mppEvents(c.challenge_id), 1);
    });

    it('a chain clock trailing ours: a transfer sent after the challenge in a block stamped seconds before it still pays the challenge, never a late payment of the expired order', async () => {
      const amount = 1_250_000n;
      const order = await expiredOrder(amount);
      // The gateway's clock 5 s ahead of the chain's when the challenge is issued (what a block
      // stamped in an earlier second, or a chain clock that trails ours, looks like).
      const route = `GET:api:ledger${++seq}`;
      assert.equal((await st.s.signed(st.m, 'PUT', `/api/v1/mpp/routes/${route}`, { body: { amount_wei: amount.toString(), chain_id: st.dev.chainId, token_symbol: 'USDC' } })).status, 200);
      st.s.clock.ms = Date.now() + 5_000;
      const ch = await st.s.request('POST', '/mpp/v1/challenge', { body: { merchant_id: st.m.merchantId, route_canonical: route, request_canonical: route, payer_addr: payer } });
      assert.equal(ch.status, 402, ch.text);
      const c = ch.body as { challenge_id: string; mac: string };
      const tx = await pay(st, 0, MERCHANT_WALLET, amount);
      await tickOk(w);
      assert.deepEqual(await transferOf(tx), [{ match_status: 'unmatched', order_id: null }], 'left for the challenge it pays');
      await finalize(st);
      st.s.clock.ms = Date.now() + 5_000;
      const r = await verify(st, { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac });
      st.s.clock.ms = Date.now();
      assert.equal(r.status, 200, r.text);
      await tickOk(w);
      assert.deepEqual(
        (await claimsOf(tx)).map((x) => [x.purpose, x.purpose_id]),
        [['mpp_challenge', c.challenge_id]],
      );
      assert.deepEqual(await orderEvents(order.id), [], 'no order.late_payment');
    });

    it('verify first: the watcher records the claimed transfer as claimed (no order, no event), and accept-payment cannot take it', async () => {
      const amount = 1_300_000n;
      const order = await expiredOrder(amount);
      const c = await pricedChallenge(amount);
      const tx = await pay(st, 0, MERCHANT_WALLET, amount);
      await finalize(st);
      assert.equal((await verifyTx(c, tx)).status, 200);
      await tickOk(w);
      await tickOk(w);
      assert.deepEqual(await transferOf(tx), [{ match_status: 'claimed', order_id: null }]);
      assert.deepEqual(await orderEvents(order.id), []);
      const acc = await acceptPayment(st.s.db, { merchantId: m.id, orderId: order.id, txRef: (_, raw) => raw, finality: () => ({ unit: 'blocks', needed: FINALITY }), now: new Date() });
      assert.equal(acc.kind, 'nothing');
      assert.equal((await getOrderRow(st.s.db, order.id)).transfer_id, null);
    });

    it('an x402 settlement to a merchant wallet is claimed before it is sent: never a late payment of the payer’s expired order', async () => {
      const amount = 1_400_000n;
      const order = await expiredOrder(amount);
      // A challenge issued before the settlement, that the settlement's transfer would pay.
      const c = await pricedChallenge(amount);
      const usdc = st.usdc;
      const body = await x402Body({ chainId: st.dev.chainId, token: usdc, payTo: MERCHANT_WALLET as Hex, nowSeconds: Math.floor(Date.now() / 1000), payerKey: st.dev.payers[0]!.privateKey, amount });
      st.s.clock.ms = Date.now();
      const r = await st.s.request('POST', '/x402/v2/settle', { body });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.success, true, r.text);
      const tx = r.body.transaction as string;
      await tickOk(w);
      const claims = await claimsOf(tx);
      assert.deepEqual(
        claims.map((x) => [x.log_index, x.purpose]),
        [[-1, 'x402_settlement']],
      );
      assert.deepEqual(await transferOf(tx), [{ match_status: 'claimed', order_id: null }]);
      assert.deepEqual(await orderEvents(order.id), []);
      // And the challenge cannot be paid with it either.
      await finalize(st);
      const v = await verifyTx(c, tx);
      assert.deepEqual([v.status, v.body.code], [409, 'tx_already_claimed']);
    });

    it('the Payment door with the unmodified mppx client: the relayed settlement pays the challenge and is never a late payment of the payer’s expired order', async () => {
      const account = privateKeyToAccount(st.dev.payers[2]!.privateKey);
      const order = await createOrder(st.s.db, chain, m, { from: account.address.toLowerCase() as Hex, amount: PRICE, expiresAt: new Date(Date.now() - 60_000) });
      // A resource server that relays each request to Tollgate's `Payment` door, as a merchant's would.
      let credential: string | undefined;
      const resource: Server = createServer(async (req, res) => {
        st.s.clock.ms = Date.now();
        if (req.headers.authorization) credential = req.headers.authorization;
        const r = await fetch(`${st.s.url}/mpp/v1/payment`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) },
          body: JSON.stringify({ merchant_id: st.m.merchantId, route_canonical: ROUTE, request_canonical: `${ROUTE}:door` }),
        });
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        for (const h of ['www-authenticate', 'payment-receipt', 'retry-after']) {
          const v = r.headers.get(h);
          if (v) headers[h] = v;
        }
        res.writeHead(r.status, headers);
        res.end(await r.text());
      });
      await new Promise<void>((ok) => resource.listen(0, '127.0.0.1', ok));
      try {
        const url = `http://127.0.0.1:${(resource.address() as AddressInfo).port}/api/data`;
        const mppx = Mppx.create({ methods: [evm.charge({ account, authorization: USDC_DOMAIN })], polyfill: false });
        const first = await mppx.fetch(url);
        const pending = await first.json();
        assert.equal(first.status, 202, JSON.stringify(pending));
        const tx = pending.tx_hash as string;
        await tickOk(w);
        await finalize(st);
        // The same credential again once final (what mppx's caller does on 202): the receipt.
        const paid = await fetch(url, { headers: { authorization: credential! } });
        assert.equal(paid.status, 200, await paid.text());
        await tickOk(w);
        assert.deepEqual(await transferOf(tx), [{ match_status: 'claimed', order_id: null }]);
        const claims = await claimsOf(tx);
        assert.ok(claims.length >= 1 && claims.every((c) => c.purpose === 'mpp_challenge'), JSON.stringify(claims));
        assert.equal(new Set(claims.map((c) => c.purpose_id)).size, 1, 'one challenge holds the transaction and its transfer');
        assert.deepEqual(await orderEvents(order.id), []);
      } finally {
        await new Promise((ok) => resource.close(ok));
      }
    });

    it('two challenges and one transfer: one receipt; the default route keeps working', async () => {
      const a = (await challenge(st, payer, `${ROUTE}:twin1`)).body;
      const b = (await challenge(st, payer, `${ROUTE}:twin2`)).body;
      const tx = await pay(st, 0, a.recipient);
      await finalize(st);
      const ra = await verifyTx(a, tx);
      const rb = await verifyTx(b, tx);
      assert.deepEqual([ra.status, rb.status, rb.body.code], [200, 409, 'tx_already_claimed']);
      assert.equal((await claimsOf(tx)).length, 1);
    });

    it('racing: verifies through the gateway while a second watcher process (its own pool) attributes the same transfers: one claim each', async (t) => {
      if (backend !== 'postgres') return t.skip('one connection: no concurrent writer on PGlite');
      const K = 5;
      const late: { order: string; c: { challenge_id: string; mac: string; recipient: string }; tx: string }[] = [];
      const live: { order: string; c: { challenge_id: string; mac: string; recipient: string }; tx: string }[] = [];
      for (let i = 0; i < K; i++) {
        const a = 3_000_000n + BigInt(i);
        const order = (await expiredOrder(a)).id;
        late.push({ order, c: await pricedChallenge(a), tx: '' });
        const b = 3_100_000n + BigInt(i);
        const liveOrder = (await createOrder(st.s.db, chain, m, { from: payer, amount: b })).id;
        live.push({ order: liveOrder, c: await pricedChallenge(b), tx: '' });
      }
      for (let i = 0; i < K; i++) {
        late[i]!.tx = await pay(st, 0, MERCHANT_WALLET, 3_000_000n + BigInt(i));
        live[i]!.tx = await pay(st, 0, MERCHANT_WALLET, 3_100_000n + BigInt(i));
      }
      await mine(st.dev.rpcUrl, FINALITY);
      const db2 = await openPostgres(st.s.database.url!, { max: 4 });
      try {
        // The watcher of a second process: its own pool; it holds the chain's lease (same holder id as
        // the first watcher, which stays idle), so its ticks run while the gateway verifies.
        const w2 = watcherFor(db2, chain, { holderId: `claims-ledger-${backend}` });
        const [answers] = await Promise.all([
          Promise.all([...late, ...live].map((x) => verifyTx(x.c, x.tx))),
          (async () => {
            for (let i = 0; i < 4; i++) await tickOk(w2);
          })(),
        ]);
        await tickOk(w2);
        // A challenge issued to the payer wins over the expired orders (whoever came first); the
        // live orders with exactly these terms win over their challenges.
        assert.deepEqual(
          answers.map((a) => a.status),
          [...late.map(() => 200), ...live.map(() => 409)],
        );
        for (const x of late) {
          assert.deepEqual(
            (await claimsOf(x.tx)).map((c) => [c.purpose, c.purpose_id]),
            [['mpp_challenge', x.c.challenge_id]],
          );
          assert.deepEqual(await orderEvents(x.order), []);
          assert.equal(await mppEvents(x.c.challenge_id), 1);
        }
        for (const x of live) {
          assert.deepEqual(
            (await claimsOf(x.tx)).map((c) => [c.purpose, c.purpose_id]),
            [['order', x.order]],
          );
          assert.equal((await getOrderRow(st.s.db, x.order)).tx_hash, x.tx);
          assert.equal(await mppEvents(x.c.challenge_id), 0);
        }
      } finally {
        await db2.close();
      }
    });

    it('reconciliation lists every incoming transfer once with what claimed it (API and `tollgate reconcile`); an unclaimed one is named as such', async () => {
      const stray = await pay(st, 1, MERCHANT_WALLET, 777_777n);
      await tickOk(w);
      const r = await st.s.admin('GET', `/admin/v1/reconciliation?chain_id=${st.dev.chainId}&merchant_id=${m.id}`);
      assert.equal(r.status, 200, r.text);
      const rows = r.body.data as { tx_hash: string; log_index: number; claimed_by: { purpose: string; id: string } | null }[];
      const keys = rows.map((x) => `${x.tx_hash}:${x.log_index}`);
      assert.equal(new Set(keys).size, keys.length, 'each transfer listed once');
      const { rows: seen } = await st.s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM chain_transfers WHERE chain_id = $1 AND orphaned_at IS NULL', [st.dev.chainId]);
      assert.equal(rows.length, seen[0]!.n, 'every transfer the watcher saw to the merchant wallet');
      // Each listed claim is the ledger's row for that transfer.
      const { rows: ledger } = await st.s.db.query<{ tx_ref: string; log_index: number; purpose: string; purpose_id: string }>('SELECT tx_ref, log_index, purpose, purpose_id FROM transfer_claims');
      for (const x of rows) {
        const own = ledger.find((c) => c.tx_ref === x.tx_hash && (c.log_index === x.log_index || c.log_index === -1));
        assert.deepEqual(x.claimed_by, own ? { purpose: own.purpose, id: own.purpose_id } : null, `${x.tx_hash}:${x.log_index}`);
      }
      assert.equal(rows.find((x) => x.tx_hash === stray)?.claimed_by, null);
      assert.ok(rows.filter((x) => x.claimed_by?.purpose === 'mpp_challenge').length >= 2);
      assert.ok(rows.some((x) => x.claimed_by?.purpose === 'order'));
      assert.ok(rows.some((x) => x.claimed_by?.purpose === 'x402_settlement'));
      assert.equal(r.body.summary.unclaimed, rows.filter((x) => x.claimed_by === null).length);

      const unclaimed = await st.s.admin('GET', `/admin/v1/reconciliation?chain_id=${st.dev.chainId}&unclaimed=true`);
      assert.ok(unclaimed.body.data.every((x: { claimed_by: unknown }) => x.claimed_by === null));
      assert.ok(unclaimed.body.data.some((x: { tx_hash: string }) => x.tx_hash === stray));
      // Paging: one transfer a page walks the same list.
      const paged: string[] = [];
      for (let after: string | null = null, first = true; first || after; first = false) {
        const p: { body: { data: { tx_hash: string; log_index: number }[]; next_after: string | null } } = await st.s.admin('GET', `/admin/v1/reconciliation?chain_id=${st.dev.chainId}&merchant_id=${m.id}&limit=1${after ? `&after=${after}` : ''}`);
        paged.push(...p.body.data.map((x) => `${x.tx_hash}:${x.log_index}`));
        after = p.body.next_after;
      }
      assert.deepEqual(paged, keys);
      for (const bad of ['', 'chain_id=x', `chain_id=${st.dev.chainId}&since=0000-01-01T00:00:00Z`, `chain_id=${st.dev.chainId}&after=1`, `chain_id=${st.dev.chainId}&limit=0`, 'chain_id=999']) {
        const b = await st.s.admin('GET', `/admin/v1/reconciliation?${bad}`);
        assert.deepEqual([b.status, b.body.code], [400, 'invalid_request'], bad);
      }

      // The merchant sees its unclaimed transfers in the portal, and only those.
      const portal = new PortalClient(st.s);
      const email = `owner-${backend}@ledger.example`;
      assert.equal((await portal.login(email, await addPortalUser(st.s, m.id, email))).status, 200);
      const mine = await portal.call('GET', '/portal/api/unclaimed-transfers');
      assert.equal(mine.status, 200, mine.text);
      const portalKeys = (mine.body.data as { tx_hash: string; log_index: number }[]).map((x) => `${x.tx_hash}:${x.log_index}`).sort();
      assert.deepEqual(
        portalKeys,
        rows
          .filter((x) => x.claimed_by === null)
          .map((x) => `${x.tx_hash}:${x.log_index}`)
          .sort(),
      );
      assert.ok(portalKeys.some((k) => k.startsWith(stray)));
      assert.equal((await new PortalClient(st.s).call('GET', '/portal/api/unclaimed-transfers')).status, 401);

      const p = spawnTollgate(['reconcile', '--chain', String(st.dev.chainId), '--merchant', m.id], { TOLLGATE_URL: st.s.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN });
      const code = p.child.exitCode ?? (await new Promise<number | null>((res) => p.child.once('exit', res)));
      assert.equal(code, 0, p.output());
      assert.match(p.output(), new RegExp(`${stray} 777777 .* -> UNCLAIMED`));
      assert.match(p.output(), new RegExp(`${rows.length} transfers, ${rows.length - r.body.summary.unclaimed} claimed, ${r.body.summary.unclaimed} unclaimed`));
    });
  });
}
