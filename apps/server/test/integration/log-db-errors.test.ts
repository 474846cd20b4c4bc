// Issue 12 item 1: an unexpected database error must be logged by its structure only (SQLSTATE,
// constraint, table), never with the statement's parameters, its SQL with values, or the error's
// message/detail/where that embed the failing row. Every route is driven into a real database
// failure, in two phases, on a real database:
//   1. writes: a trigger on every table but request_nonces raises an error whose message, detail
//      and hint carry the whole row (`TRIGGER-BOOM {...}`);
//   2. reads: the tables the remaining routes read are renamed away (42P01; PGlite attaches the
//      statement's parameters to the error it throws).
// Each request carries sentinel values (email, phone, client reference, metadata, names, URLs, the
// admin token in a query string); the captured log at trace level must hold none of them, no
// trigger text, and no id the test did not itself put in a path.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { signedHeaders } from '@tollgate/protocol';
import type { RouteDef } from '../../src/http/route.ts';
import { startTollgate, type Tollgate } from '../../src/main.ts';
import { ROUTES } from '../../src/routes.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { buildOrderBody, MERCHANT_WALLET, PAYER } from '../helpers/orders.ts';
import { privateKeyToAccount } from 'viem/accounts';
import { SettlementSigner } from '../../src/config/schema.ts';
import { SmtpSettings } from '../../src/config/secrets.ts';
import { buildConfig, fakeChain, TEST_ADMIN_TOKEN, TestClock, type Creds } from '../helpers/server.ts';
import { send, TABLES, type Answer } from './fuzz-fixtures.ts';
import { signTestNotification } from '../../src/rails/card/test/processor.ts';
import { x402Body } from './x402-fixtures.ts';

const T = randomBytes(6).toString('hex');
const MPP_ROUTE = 'GET:api:data';
const MPP_TABLES = ['mpp_routes', 'mpp_challenges', 'transfer_claims', 'mpp_receipt_keys', 'x402_authorizations'];
/** Routes that answer from configuration alone: no database statement can fail under them. */
const NO_DATABASE = new Set(['GET /x402/v2/supported']);
const DELEGATE_TABLES = ['merchant_callbacks', 'settlements', 'worker_leases'];
const QUICKPAY_TABLES = ['quickpay_products', 'quickpay_links', 'quickpay_sessions'];
const PORTAL_TABLES = ['portal_users', 'portal_sessions', 'portal_invitations', 'portal_login_failures', 'portal_password_resets', 'portal_recovery_codes'];
const CARD_TABLES = ['card_payments', 'card_events', 'refunds'];
/** Tables whose writes fail in phase 1 (the fuzzers' list, quick-pay's included, plus the machine-payment, DELEGATE, portal and card tables). */
const WRITTEN = [...TABLES, ...MPP_TABLES, ...DELEGATE_TABLES, ...PORTAL_TABLES, ...CARD_TABLES];
/** Request values that must never be logged (a body or query value, or a secret). */
const SENTINELS = {
  email: `mail-${T}@example.com`,
  phone: `+1555${parseInt(T, 16) % 10_000_000}`,
  clientRef: `cref-${T}`,
  publicNote: `pub-${T}`,
  item: `item-${T}`,
  dappOrder: `dapp-${T}`,
  merchantName: `name-${T}`,
  returnUrl: `https://shop-${T}.example/`,
  hookUrl: `http://127.0.0.1:9/hook-${T}`,
  queryValue: `qv-${T}`,
  adminToken: TEST_ADMIN_TOKEN,
  // the TEST processor's duplicate-charge card: its request writes (and fails) in phase 1
  cardNumber: '4000000000001018',
  refundReason: `refund-${T}`,
};

/** One request per route with sentinel values; ids in paths come from the fixture. */
function requestFor(route: RouteDef<any, any, any>, ids: Record<string, string>): { path: string; body?: Record<string, unknown> | undefined; query?: string; headers?: Record<string, string> } {
  const path = route.url.replace(/:([a-z_]+)/g, (_x, n: string) => ids[n] ?? 'x');
  const md = JSON.stringify({ email: SENTINELS.email, phone: SENTINELS.phone });
  switch (`${route.method} ${route.url}`) {
    case 'POST /api/v1/orders':
      return { path, body: buildOrderBody({ dapp_order_id: SENTINELS.dappOrder }) };
    case 'POST /api/v1/checkout/sessions':
      return {
        path,
        body: {
          checkout_type: 'DIRECT',
          price: '2.00',
          client_reference_id: SENTINELS.clientRef,
          private_metadata_json: md,
          public_metadata_json: JSON.stringify({ note: SENTINELS.publicNote }),
          line_items_json: JSON.stringify([{ name: SENTINELS.item, quantity: 1, amount: '2.00' }]),
        },
      };
    case 'POST /card/v1/notifications/:processor':
      // A TEST processor notification, signed like the processor signs it (raw body).
      return { path: path.replace('/x', '/test'), body: JSON.parse(ids.notification_body!), headers: { 'x-tollgate-test-signature': ids.notification_sig! } };
    case 'POST /checkout/v1/sessions/:checkout_id/card/test-payment':
    case 'POST /quickpay/v1/sessions/:session_id/card/test-payment':
      return { path, body: { number: SENTINELS.cardNumber, exp_month: 12, exp_year: 2099, cvc: '987' } };
    case 'POST /api/v1/orders/:order_id/refunds':
    case 'POST /admin/v1/orders/:order_id/card/refunds':
      return { path, body: { reason: SENTINELS.refundReason } };
    case 'POST /admin/v1/orders/:order_id/card/simulate':
      return { path, body: { scenario: 'succeeded' } };
    case 'POST /admin/v1/orders/:order_id/card/hold':
    case 'POST /admin/v1/orders/:order_id/card/release':
      return { path, body: { reason: 'balance' } };
    case 'POST /checkout/v1/sessions/:checkout_id/solana-pay':
      return { path, body: { account: '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T' } };
    case 'POST /checkout/v1/sessions/:checkout_id/bind':
      return { path, body: { chain_id: 31337, token_symbol: 'USDC', from_address: PAYER } };
    case 'POST /admin/v1/merchants':
      return { path, body: { name: SENTINELS.merchantName, return_urls: [SENTINELS.returnUrl] } };
    case 'POST /admin/v1/merchants/:merchant_id/wallets':
      return { path, body: { chain_id: 31337, token_symbol: 'USDT', address: MERCHANT_WALLET } };
    case 'POST /admin/v1/merchants/:merchant_id/fee-balance/top-ups':
      return { path, body: { amount: '1.00' } };
    case 'POST /admin/v1/merchants/:merchant_id/card-rail':
      return { path, body: { enabled: true } };
    case 'PUT /admin/v1/merchants/:merchant_id/return-urls':
      return { path, body: { return_urls: [SENTINELS.returnUrl] } };
    case 'PUT /api/v1/mpp/routes/:route_canonical':
    case 'PUT /admin/v1/merchants/:merchant_id/mpp/routes/:route_canonical':
      return { path, body: { amount_wei: '1000', chain_id: 31337, token_symbol: 'USDC' } };
    case 'POST /mpp/v1/challenge':
    case 'POST /mpp/v1/payment':
      return { path, body: { merchant_id: ids.merchant_id, route_canonical: MPP_ROUTE, request_canonical: MPP_ROUTE, payer_addr: PAYER } };
    case 'POST /mpp/v1/verify':
      return { path, body: { challenge_id: ids.challenge_id, tx_hash: `0x${'ab'.repeat(32)}`, payer_addr: PAYER, mac: ids.challenge_mac } };
    case 'GET /admin/v1/chains/:chain_id/settlement':
      return { path: '/admin/v1/chains/31337/settlement' };
    case 'POST /admin/v1/merchants/:merchant_id/callbacks':
      return { path, body: { chain_id: 31337, callback_contract: MERCHANT_WALLET, eip712_name: SENTINELS.merchantName, eip712_version: '1' } };
    case 'POST /api/v1/orders/:order_id/calldata-signature':
      return { path, body: { signature: `0x${'1b'.repeat(65)}` } };
    case 'POST /api/v1/orders/:order_id/authorization':
      return { path, body: { from: PAYER, to: MERCHANT_WALLET, value: '1000', validAfter: '0', validBefore: '99999999999', nonce: `0x${'ab'.repeat(32)}`, signature: `0x${'1b'.repeat(65)}` } };
    case 'POST /api/v1/products':
    case 'POST /api/v1/products/:product_id':
    case 'POST /admin/v1/merchants/:merchant_id/products':
      return { path, body: { name: SENTINELS.item, description: SENTINELS.publicNote, price: '1.00' } };
    case 'POST /api/v1/payment-links':
    case 'POST /admin/v1/merchants/:merchant_id/payment-links':
      return { path, body: { product_id: ids.product_id } };
    case 'POST /api/v1/payment-links/:link_id':
      return { path, body: { active: true } };
    case 'POST /quickpay/v1/x402/sessions':
      return { path, body: { merchant_id: ids.merchant_id, payer_addr: PAYER, chain_id: 31337, token_contract: ids.usdc_contract, product_key: ids.link_id } };
    case 'POST /quickpay/v1/links/:link_id/sessions':
      return { path, body: { chain_id: 31337, token_symbol: 'USDC', from_address: PAYER, memo: SENTINELS.clientRef } };
    case 'POST /x402/v2/verify':
    case 'POST /x402/v2/settle':
      return { path, body: JSON.parse(ids.x402_body!) as Record<string, unknown> };
    case 'PUT /admin/v1/merchants/:merchant_id/underpayment-tolerance':
      return { path, body: { underpay_tolerance_bps: 50 } };
    case 'POST /admin/v1/merchants/:merchant_id/webhooks':
      return { path, body: { url: SENTINELS.hookUrl, events: ['order.invoiced'] } };
    case 'POST /admin/v1/merchants/:merchant_id/webhooks/:webhook_id/rotate-secret':
      return { path, body: { overlap_seconds: 0 } };
    case 'POST /admin/v1/merchants/:merchant_id/webhooks/trigger':
      return { path, body: { event: 'order.invoiced' } };
    case 'POST /admin/v1/merchants/:merchant_id/webhook-deliveries/redeliver':
      return { path, body: { since: '2020-01-01T00:00:00Z' } };
    case 'GET /admin/v1/merchants/:merchant_id/webhook-deliveries':
      return { path, query: `order_id=${SENTINELS.queryValue}` };
    case 'GET /admin/v1/reconciliation':
      return { path, query: `chain_id=31337&merchant_id=${SENTINELS.queryValue}` };
    case 'POST /portal/api/login':
      return { path, body: { email: 'owner@log-fixture.example', password: ids.portal_password } };
    case 'POST /admin/v1/portal-users/password-resets':
    case 'POST /portal/api/password-resets':
      return { path, body: { email: 'owner@log-fixture.example' } };
    case 'POST /portal/api/password-resets/complete':
      return { path, body: { token: 'x'.repeat(43), password: `pw-${T}-long-enough` } };
    case 'GET /portal/api/session/state':
      return { path, headers: { cookie: ids.portal_cookie! } };
    case 'POST /portal/api/operator/login':
      return { path, body: { admin_token: TEST_ADMIN_TOKEN } };
    case 'POST /portal/api/invitations/accept':
      return { path, body: { token: ids.invitation_token, password: `pw-${T}-long-enough` } };
    case 'POST /portal/api/merchants/select':
      return { path, body: { merchant_id: ids.merchant_id } };
    case 'POST /portal/api/webhooks':
      return { path, body: { url: SENTINELS.hookUrl, events: ['order.invoiced'] } };
    case 'POST /portal/api/webhooks/test-event':
      return { path, body: { event: 'order.invoiced' } };
    case 'PUT /portal/api/settings/return-urls':
      return { path, body: { return_urls: [SENTINELS.returnUrl] } };
    case 'PUT /portal/api/settings':
      return { path, body: { name: SENTINELS.merchantName, logo_url: null } };
    case 'POST /portal/api/team/invitations':
      return { path, body: { email: SENTINELS.email, role: 'viewer' } };
    case 'POST /admin/v1/merchants/:merchant_id/portal-users':
      return { path, body: { email: SENTINELS.email } };
    case 'GET /portal/api/exports/orders.csv':
    case 'GET /portal/api/exports/payments.csv':
      return { path, query: 'from=2020-01-01&to=2100-01-01' };
    case 'GET /portal/api/orders':
      return { path, query: `q=${SENTINELS.queryValue}` };
    // A secret sent by mistake in a query string of routes that take no query.
    case 'GET /admin/v1/merchants/:merchant_id':
    case 'GET /merchants/:merchant_id':
    case 'GET /api/v1/orders/:order_id':
      return { path, query: `token=${SENTINELS.adminToken}&q=${SENTINELS.queryValue}` };
  }
  return { path, body: route.method === 'POST' || route.method === 'PUT' ? {} : undefined };
}

for (const backend of backends()) {
  describe(`database errors are logged without data (${backend})`, () => {
    const lines: string[] = [];
    let tg: Tollgate;
    let database: TestDatabase;
    const clock = new TestClock();
    let m: Creds;
    let ids: Record<string, string>;
    /** an operator session looking at the fixture merchant: it passes every portal role check */
    const portal = { cookie: '', csrf: '' };
    const failed = new Map<string, Answer>();

    async function call(route: RouteDef<any, any, any>): Promise<Answer> {
      const r = requestFor(route, ids);
      const query = r.query ? Object.fromEntries(new URLSearchParams(r.query)) : undefined;
      const auth: Record<string, string> =
        route.auth === 'merchant'
          ? signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, ...(query ? { query } : {}), ...(r.body ? { body: r.body } : {}), now: () => clock.now() })
          : route.auth === 'admin'
            ? { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }
            : route.auth === 'portal'
              ? { cookie: portal.cookie, 'x-csrf-token': portal.csrf }
              : {};
      const body = r.body ? JSON.stringify(r.body) : undefined;
      return send(tg.url!, { method: route.method, path: r.path + (r.query ? `?${r.query}` : ''), headers: { ...auth, ...r.headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body });
    }
    async function admin(method: string, path: string, body?: unknown) {
      const a = await send(tg.url!, { method, path, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
      assert.ok(a.status < 300, `${method} ${path}: ${a.status} ${a.text}`);
      return a.json;
    }

    before(async () => {
      database = await openTestDatabase(backend);
      const stream = new Writable({
        write(chunk, _enc, cb) {
          for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(l);
          cb();
        },
      });
      // USDC with EIP-3009 and an executor key: the x402 facilitator serves the chain (its RPC is
      // unreachable; the database statements come first).
      const chain = fakeChain();
      const x402Chain = { ...chain, tokens: chain.tokens.map((t) => (t.symbol === 'USDC' ? { ...t, eip3009: true } : t)) };
      const executorKey = `0x${'11'.repeat(32)}` as const;
      // SMTP set (to a port nothing listens on): the self-service reset route reaches the database.
      tg = await startTollgate(buildConfig({ chains: [x402Chain], settlement: new SettlementSigner(executorKey, privateKeyToAccount(executorKey).address), smtp: new SmtpSettings('smtp://127.0.0.1:9', 'portal@log-fixture.example') }), {
        db: database.db,
        clock,
        role: 'api',
        http: { rateLimits: false, logger: { level: 'trace', stream } },
      });
      const created = await admin('POST', '/admin/v1/merchants', { name: 'Log fixture', return_urls: ['https://fixture.example/'] });
      m = { merchantId: created.merchant_id, apiKey: created.api_key, apiSecret: created.api_secret };
      await admin('POST', `/admin/v1/merchants/${m.merchantId}/fee-balance/top-ups`, { amount: '10.00' });
      await admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: 31337, token_symbol: 'USDC', address: MERCHANT_WALLET });
      const spare = await admin('POST', `/admin/v1/merchants/${m.merchantId}/api-keys`);
      const hook = await admin('POST', `/admin/v1/merchants/${m.merchantId}/webhooks`, { url: 'http://127.0.0.1:9/fixture', events: ['order.invoiced'] });
      const signedPost = async (path: string, body: Record<string, unknown>) => {
        const h = signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, body, now: () => clock.now() });
        const a = await send(tg.url!, { method: 'POST', path, headers: { ...h, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        assert.ok(a.status === 200 || a.status === 402, a.text);
        return a.json;
      };
      const order = await signedPost('/api/v1/orders', buildOrderBody());
      await admin('PUT', `/admin/v1/merchants/${m.merchantId}/mpp/routes/${MPP_ROUTE}`, { amount_wei: '1000', chain_id: 31337, token_symbol: 'USDC' });
      const ch = await send(tg.url!, {
        method: 'POST',
        path: '/mpp/v1/challenge',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ merchant_id: m.merchantId, route_canonical: MPP_ROUTE, request_canonical: MPP_ROUTE, payer_addr: PAYER }),
      });
      assert.equal(ch.status, 402, ch.text);
      // A session with a started card payment: the card routes reach their writes.
      await admin('POST', `/admin/v1/merchants/${m.merchantId}/card-rail`, { enabled: true });
      const session = await signedPost('/api/v1/checkout/sessions', { checkout_type: 'DIRECT', price: '1.00', payment_rails: 'crypto,fiat', fiat_currency: 'EUR', fiat_amount: '1.00' });
      const card = await send(tg.url!, { method: 'POST', path: `/checkout/v1/sessions/${session.checkout_id}/card`, headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(card.status, 200, card.text);
      const product = await signedPost('/api/v1/products', { name: 'Fixture product', price: '3.00' });
      const link = await signedPost('/api/v1/payment-links', { product_id: product.product_id });
      const qps = await send(tg.url!, { method: 'POST', path: `/quickpay/v1/links/${link.link_id}/sessions`, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain_id: 31337, token_symbol: 'USDC', from_address: MERCHANT_WALLET }) });
      assert.equal(qps.status, 200, qps.text);
      await admin('POST', `/admin/v1/merchants/${m.merchantId}/webhooks/trigger`, { event: 'order.invoiced' });
      const { rows } = await database.db.query<{ id: string }>('SELECT id FROM webhook_deliveries ORDER BY created_at DESC LIMIT 1');
      const pu = await admin('POST', `/admin/v1/merchants/${m.merchantId}/portal-users`, { email: 'owner@log-fixture.example', role: 'viewer' });
      const op = await send(tg.url!, { method: 'POST', path: '/portal/api/operator/login', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ admin_token: TEST_ADMIN_TOKEN }) });
      portal.cookie = String(op.headers['set-cookie']).split(';')[0]!;
      portal.csrf = op.json.csrf_token;
      const sel = await send(tg.url!, { method: 'POST', path: '/portal/api/merchants/select', headers: { 'content-type': 'application/json', cookie: portal.cookie, 'x-csrf-token': portal.csrf }, body: JSON.stringify({ merchant_id: m.merchantId }) });
      assert.equal(sel.status, 200, sel.text);
      const inv = await send(tg.url!, {
        method: 'POST',
        path: '/portal/api/team/invitations',
        headers: { 'content-type': 'application/json', cookie: portal.cookie, 'x-csrf-token': portal.csrf },
        body: JSON.stringify({ email: 'invited@log-fixture.example', role: 'viewer' }),
      });
      assert.equal(inv.status, 201, inv.text);
      const x402 = JSON.stringify(await x402Body({ chainId: 31337, token: chain.tokens[0]!.address, payTo: MERCHANT_WALLET, nowSeconds: Math.floor(clock.now() / 1000) }));
      const notification = JSON.stringify({ events: [{ id: 'tev_log_fixture', type: 'payment.processing', order_id: card.json.order_id, payment_reference: 'tpi_log_fixture', created: 1 }] });
      ids = {
        portal_cookie: portal.cookie,
        notification_body: notification,
        notification_sig: signTestNotification(tg.deps.config.masterKey, notification),
        x402_body: x402,
        user_id: pu.user_id,
        portal_password: pu.password,
        invitation_token: String(inv.json.invitation_url).split('/').pop()!,
        route_canonical: MPP_ROUTE,
        challenge_id: ch.json.challenge_id,
        challenge_mac: ch.json.mac,
        merchant_id: m.merchantId,
        order_id: order.order_id,
        checkout_id: session.checkout_id,
        api_key: spare.api_key,
        webhook_id: hook.webhook_id,
        delivery_id: rows[0]!.id,
        product_id: product.product_id,
        link_id: link.link_id,
        session_id: qps.json.session_id,
        usdc_contract: chain.tokens[0]!.address,
      };
    });
    after(async () => {
      await tg?.close();
      await database?.drop();
    });

    it('phase 1: every write fails in a trigger whose error text holds the row', async () => {
      await database.db.query(`CREATE FUNCTION tollgate_test_boom() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE r text := row_to_json(coalesce(NEW, OLD))::text;
        BEGIN RAISE EXCEPTION USING MESSAGE = 'TRIGGER-BOOM ' || r, DETAIL = 'TRIGGER-BOOM ' || r, HINT = 'TRIGGER-BOOM ' || r, ERRCODE = 'P0001'; END $$`);
      for (const t of WRITTEN) await database.db.query(`CREATE TRIGGER boom BEFORE INSERT OR UPDATE OR DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION tollgate_test_boom()`);
      for (const route of ROUTES) {
        const a = await call(route);
        if (a.status === 500) failed.set(`${route.method} ${route.url}`, a);
      }
      // The request of the original report: an escaped NUL inside private_metadata_json (now a 400
      // before the database; it was a 500 whose log line held the metadata).
      const body = { checkout_type: 'DIRECT', price: '1.00', client_reference_id: SENTINELS.clientRef, private_metadata_json: JSON.stringify({ email: SENTINELS.email, phone: SENTINELS.phone, note: 'gift\u0000wrap' }) };
      const h = signedHeaders({ apiKey: m.apiKey, apiSecret: m.apiSecret, body, now: () => clock.now() });
      const nul = await send(tg.url!, { method: 'POST', path: '/api/v1/checkout/sessions', headers: { ...h, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.ok(nul.status === 400 || nul.status === 500, nul.text);
      for (const t of WRITTEN) await database.db.query(`DROP TRIGGER boom ON ${t}`);
      assert.ok(failed.size >= 10, `writes failed: ${[...failed.keys()].join(', ')}`);
    });

    it('phase 2: every remaining route fails reading a table that is gone', async () => {
      const reads = ['orders', 'checkout_sessions', 'webhook_endpoints', 'webhook_deliveries', 'webhook_events', 'merchant_wallets', 'fee_accounts', 'chain_cursors', ...MPP_TABLES, 'merchant_callbacks', 'settlements', ...QUICKPAY_TABLES];
      for (const t of reads) await database.db.query(`ALTER TABLE ${t} RENAME TO ${t}_gone`);
      for (const route of ROUTES.filter((r) => !failed.has(`${r.method} ${r.url}`))) {
        const a = await call(route);
        if (a.status === 500) failed.set(`${route.method} ${route.url}`, a);
      }
      // Admin and public reads of the merchant itself (merchant routes need the table to authenticate).
      await database.db.query('ALTER TABLE merchants RENAME TO merchants_gone');
      for (const route of ROUTES.filter((r) => r.auth !== 'merchant' && !failed.has(`${r.method} ${r.url}`))) {
        const a = await call(route);
        if (a.status === 500) failed.set(`${route.method} ${route.url}`, a);
      }
      await database.db.query('ALTER TABLE merchants_gone RENAME TO merchants');
      for (const t of reads) await database.db.query(`ALTER TABLE ${t}_gone RENAME TO ${t}`);
      const missing = ROUTES.map((r) => `${r.method} ${r.url}`).filter((k) => !failed.has(k) && !NO_DATABASE.has(k));
      assert.deepEqual(missing, [], 'every route was driven into a database failure');
    });

    it('the log holds none of the values: no error text, no body or query value, no secret, no new id', () => {
      const text = lines.join('\n');
      assert.equal(text.includes('TRIGGER-BOOM'), false, 'the error text of a failed statement was logged');
      for (const [name, v] of Object.entries(SENTINELS)) {
        const where = lines.filter((l) => l.includes(v)).map((l) => l.slice(0, 300));
        assert.equal(text.includes(v), false, `the ${name} sent in a request was logged:\n${where.join('\n')}`);
      }
      // No id the test did not put in a path: a new order or session id lives only in the failed row.
      const known = new Set(Object.values(ids));
      // The id alphabet is alphanumeric (base58 ids, and merchant ids from base64url with - and _
      // replaced): a base58-only pattern cut a merchant id at its first 0/O/I/l, and the cut prefix
      // looked like an unknown id.
      const unknown = [...text.matchAll(/\b(?:ord|cs|evt|whd|whe|key|mch|prd|pl|qps)_[0-9A-Za-z]{8,}/g)].map((x) => x[0]).filter((id) => !known.has(id));
      assert.deepEqual([...new Set(unknown)], [], 'ids of failed rows were logged');
      assert.ok(/\?token=\[redacted\]&q=\[redacted\]/.test(text), 'the query string is logged with its names only');
    });

    it('the log holds each failure by its structure (SQLSTATE, routine, object names)', () => {
      // Each failure is logged once with its SQLSTATE, under its request id.
      for (const [route, a] of failed) {
        const line = lines.find((l) => l.includes(a.json.request_id) && l.includes('"unhandled error"'));
        assert.ok(line, `${route}: no error line for ${a.json.request_id}`);
        const err = JSON.parse(line).error;
        assert.match(err.sqlstate, /^[0-9A-Z]{5}$/, `${route}: ${line}`);
        assert.deepEqual(
          Object.keys(err).filter((k) => ['detail', 'hint', 'where', 'query', 'params', 'stack', 'internalQuery'].includes(k)),
          [],
          `${route}: ${line}`,
        );
        // A message only for classes whose messages carry no values (here 42P01, naming a table).
        if ('message' in err) assert.match(err.sqlstate, /^42/, `${route}: ${line}`);
      }
      // Structure that helps an operator: the trigger's routine, the missing relation's message.
      assert.ok(
        lines.some((l) => l.includes('"sqlstate":"P0001"') && l.includes('"routine":"exec_stmt_raise"')),
        'the trigger failure is logged by SQLSTATE and routine',
      );
      assert.ok(
        lines.some((l) => /"sqlstate":"42P01".*"message":"relation \\"orders\\" does not exist"/.test(l)),
        'a missing relation is named',
      );
    });
  });
}
