import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { backends } from '../helpers/db.ts';
import { goatManifest, goatPay, goatTarget, toWei } from '../helpers/goat-quickpay.ts';
import { setupMerchant } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { startCheckoutServer } from './checkout-fixtures.ts';
import { chainConfigOf, startTestChain } from './watcher-fixtures.ts';
import { freePort } from '../helpers/net.ts';

/**
 * GOAT's quick-pay wire on Tollgate (docs/quickpay.md, "GOAT's quick-pay wire"): every request
 * GOAT's quick-pay client and CLI make — manifest, agent document, discovery, session create and
 * status — with the checks that client applies to each answer (helpers/goat-quickpay.ts), paying
 * on anvil. A merchant id stands for all its links; a link id for that link.
 */
for (const backend of backends()) {
  describe(`GOAT quick-pay wire (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    let m: Creds;
    let usdc: string;
    let usdt: string;
    let fixed: any;
    let any: any;
    let mining: NodeJS.Timeout;
    before(async () => {
      dev = await startTestChain();
      const port = await freePort();
      s = await startCheckoutServer(backend, { chains: [chainConfigOf(dev, { confirmations: 1, finalityConfirmations: 2, pollIntervalMs: 50 })], config: { port, host: '127.0.0.1', publicBaseUrl: `http://127.0.0.1:${port}` } });
      m = await setupMerchant(s, { name: 'Goat Shop' });
      usdc = dev.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase();
      usdt = dev.tokens.find((t) => t.symbol === 'USDT')!.address.toLowerCase();
      const p = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Coffee mug', description: 'ceramic', price: '9.99', image_url: 'https://shop.example/mug.png' } });
      fixed = (await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id, options: `${dev.chainId}:USDC` } })).body;
      any = (await s.signed(m, 'POST', '/api/v1/payment-links', { body: { min_amount: '1', max_amount: '50.5', options: `${dev.chainId}:USDC,${dev.chainId}:USDT` } })).body;
      mining = setInterval(() => void mine(dev.rpcUrl, 1).catch(() => {}), 100);
    });
    after(async () => {
      clearInterval(mining);
      await s?.close();
      await dev?.stop();
    });

    it('link ids and merchant ids make links GOAT’s client accepts; Tollgate’s own link URLs still work', async () => {
      for (const id of [fixed.link_id, any.link_id, m.merchantId]) {
        for (const tail of ['', '/agent.md', '/manifest.json']) assert.equal(goatTarget(`${s.url}/quickpay/${id}${tail}`).merchantId, id);
      }
      assert.throws(() => goatTarget(fixed.url), /refuses this link path/, 'the hosted page URL is not a GOAT link: the GOAT form is /quickpay/<id>');
      assert.equal((await s.request('GET', `/quickpay/pay/${fixed.link_id}`)).status, 200);
      assert.equal((await s.request('GET', `/quickpay/v1/links/${fixed.link_id}/manifest.json`)).status, 200);
      // GOAT's web entry: a link goes to its page, a merchant to its agent document
      const web = await fetch(`${s.url}/quickpay/${fixed.link_id}`, { redirect: 'manual' });
      assert.deepEqual([web.status, web.headers.get('location')], [302, `/quickpay/pay/${fixed.link_id}`]);
      const webM = await fetch(`${s.url}/quickpay/${m.merchantId}`, { redirect: 'manual' });
      assert.deepEqual([webM.status, webM.headers.get('location')], [302, `/quickpay/${m.merchantId}/agent.md`]);
    });

    it('manifests: a merchant id lists every fixed-price link as a product and the any-amount link as the custom amount', async () => {
      const mm = await goatManifest(`${s.url}/quickpay/${m.merchantId}/agent.md`);
      assert.deepEqual(mm.merchant, { merchant_id: m.merchantId, display_name: 'Goat Shop' });
      const x = mm.rails.x402;
      assert.deepEqual([x.enabled, x.custom_amount, x.memo_required, x.session_endpoint], [true, true, false, `${s.url}/quickpay/v1/x402/sessions`]);
      assert.deepEqual(x.products, [{ product_key: fixed.link_id, name: 'Coffee mug', description: 'ceramic', image_url: 'https://shop.example/mug.png', price: '9.99', tokens: [{ chain_id: dev.chainId, token_contract: usdc }] }]);
      const byContract = Object.fromEntries(x.tokens.map((t: any) => [t.token_contract, t]));
      assert.deepEqual(byContract[usdc], { chain_id: dev.chainId, token_symbol: 'USDC', token_contract: usdc, decimals: 6, min_amount_wei: '1000000', max_amount_wei: '50500000' });
      assert.equal(byContract[usdt].max_amount_wei, '50500000');
      assert.deepEqual(mm.rails.mpp, { enabled: false, challenge_endpoint: `${s.url}/mpp/v1/challenge`, verify_endpoint: `${s.url}/mpp/v1/verify`, routes: [] });
      // a fixed link alone: one product, no custom amount
      const lf = await goatManifest(`${s.url}/quickpay/${fixed.link_id}`);
      assert.deepEqual([lf.rails.x402.custom_amount, lf.rails.x402.products.map((p: any) => p.product_key), lf.rails.x402.tokens[0].min_amount_wei], [false, [fixed.link_id], '0']);
      // an any-amount link alone
      const la = await goatManifest(`${s.url}/quickpay/${any.link_id}/manifest.json`);
      assert.deepEqual([la.rails.x402.custom_amount, la.rails.x402.products], [true, []]);
      // agent.md and discovery
      const md = await s.request('GET', `/quickpay/${m.merchantId}/agent.md`);
      assert.match(md.headers.get('content-type') ?? '', /^text\/markdown/);
      assert.ok(md.text.includes(`goatx402-quickpay pay-product ${s.url}/quickpay/${m.merchantId}/agent.md`) && md.text.includes(fixed.link_id) && md.text.includes('9.99'), md.text);
      const d = await s.request('GET', `/quickpay/v1/merchants/${m.merchantId}`);
      assert.deepEqual(d.body, {
        merchant_id: m.merchantId,
        display_name: 'Goat Shop',
        quickpay_enabled: true,
        links: { web: `${s.url}/quickpay/${m.merchantId}`, agent_md: `${s.url}/quickpay/${m.merchantId}/agent.md`, manifest: `${s.url}/quickpay/${m.merchantId}/manifest.json` },
        rails: { x402: { enabled: true, custom_amount: true, products: 1, tokens: 2 }, mpp: { enabled: false, routes: 0 } },
      });
      for (const path of ['/quickpay/nobody/manifest.json', '/quickpay/pl_nope/agent.md', '/quickpay/v1/merchants/nobody']) assert.equal((await s.request('GET', path)).status, 404, path);
    });

    it('pay-mpp: a merchant id lists the merchant’s machine-payment routes as GOAT’s MPP routes; the challenge route takes them', async () => {
      const put = await s.signed(m, 'PUT', '/api/v1/mpp/routes/GET:api:data', { body: { amount_wei: '250000', chain_id: dev.chainId, token_symbol: 'USDC' } });
      assert.equal(put.status, 200, put.text);
      const mm = await goatManifest(`${s.url}/quickpay/${m.merchantId}`);
      assert.equal(mm.rails.mpp.enabled, true);
      assert.deepEqual(mm.rails.mpp.routes, [{ route_canonical: 'GET:api:data', route_pricing_version: 1, chain_id: dev.chainId, token_symbol: 'USDC', token_decimals: 6, token_contract: usdc, amount_wei: '250000' }]);
      // a link id has no machine-payment routes (GOAT's MPP client would name the link as the merchant)
      assert.equal((await goatManifest(`${s.url}/quickpay/${any.link_id}`)).rails.mpp.enabled, false);
      // what GOAT's MPP client asks next, on the same origin: the challenge of that route
      const payer = dev.payers[6]!.address;
      const ch = await s.request('POST', '/mpp/v1/challenge', { body: { merchant_id: m.merchantId, route_canonical: 'GET:api:data', request_canonical: 'GET:api:data', payer_addr: payer } });
      assert.equal(ch.status, 402, ch.text);
      assert.equal((await s.request('GET', `/quickpay/v1/merchants/${m.merchantId}`)).body.rails.mpp.routes, 1);
      assert.ok((await s.request('GET', `/quickpay/${m.merchantId}/agent.md`)).text.includes('`GET:api:data`: 250000 base units of USDC'));
    });

    it('pay-product: the session’s terms are the manifest price in the chosen token; paid on anvil, the status reports the hash and amount', async () => {
      const link = `${s.url}/quickpay/${m.merchantId}/agent.md`;
      const mm = await goatManifest(link);
      const p = mm.rails.x402.products[0];
      const payer = dev.payers[2]!;
      const out = await goatPay(link, { privateKey: payer.privateKey as Hex, rpcUrl: dev.rpcUrl, chainId: dev.chainId, tokenContract: usdc, decimals: 6, productKey: p.product_key });
      assert.equal(out.created.reused, false);
      assert.equal(out.created.x402.accepts[0].amount, toWei(p.price, 6));
      assert.deepEqual([out.final.status, out.final.tx_hash, out.final.amount_wei, out.final.product_key], ['PAYMENT_CONFIRMED', out.txHash, '9990000', fixed.link_id]);
      // the merchant sees it as a session of the link
      const rec = (await s.signed(m, 'GET', `/api/v1/payment-links/${fixed.link_id}/sessions`)).body.data[0];
      assert.deepEqual([rec.session_id, rec.tx_hash, rec.from_address], [out.created.session_id, out.txHash, payer.address.toLowerCase()]);
    });

    it('pay-x402: a custom amount_wei on the any-amount link, in USDT', async () => {
      const out = await goatPay(`${s.url}/quickpay/${any.link_id}`, { privateKey: dev.payers[3]!.privateKey as Hex, rpcUrl: dev.rpcUrl, chainId: dev.chainId, tokenContract: usdt, decimals: 6, amountWei: '12500000' });
      assert.deepEqual([out.final.status, out.final.amount_wei, out.final.amount, out.final.token_symbol], ['PAYMENT_CONFIRMED', '12500000', '12.5', 'USDT']);
    });

    it('a retry never pays twice: the same payer and terms get the live session back as reused, with or without a key', async () => {
      const payer = dev.payers[4]!;
      const body = { merchant_id: m.merchantId, payer_addr: payer.address, chain_id: dev.chainId, token_contract: usdc, amount_wei: '3000000' };
      const a = await s.request('POST', '/quickpay/v1/x402/sessions', { body });
      const b = await s.request('POST', '/quickpay/v1/x402/sessions', { body: { ...body, payer_addr: payer.address.toLowerCase() } });
      assert.deepEqual([a.status, a.body.reused, a.body.status, b.status, b.body.reused, b.body.session_id], [200, false, 'ORDER_CREATED', 200, true, a.body.session_id]);
      const k1 = await s.request('POST', '/quickpay/v1/x402/sessions', { body: { ...body, amount_wei: '4000000', idempotency_key: 'goat-retry-1' } });
      const k2 = await s.request('POST', '/quickpay/v1/x402/sessions', { body: { ...body, amount_wei: '4000000', idempotency_key: 'goat-retry-1' } });
      assert.deepEqual([k1.body.reused, k2.body.reused, k2.body.session_id], [false, true, k1.body.session_id]);
      // GOAT's payer would not broadcast on the reused session: it has the terms but polls
      assert.ok(k2.body.x402.accepts[0].payTo);
    });

    it('refusals: clear codes, nothing created', async () => {
      const payer = dev.payers[5]!.address;
      const base = { merchant_id: m.merchantId, payer_addr: payer, chain_id: dev.chainId, token_contract: usdc };
      const cases: [Record<string, unknown>, number, string][] = [
        [{ ...base, merchant_id: 'nobody', amount_wei: '2000000' }, 404, 'merchant_not_found'],
        [{ ...base, product_key: 'pl_nope' }, 404, 'product_not_found'],
        [{ ...base, product_key: fixed.link_id, amount_wei: '1' }, 400, 'invalid_amount'],
        [{ ...base, product_key: fixed.link_id, token_contract: usdt }, 400, 'token_not_supported'],
        [{ ...base, amount_wei: '2000000', chain_id: 999 }, 400, 'chain_not_supported'],
        [{ ...base, amount_wei: '60000000' }, 400, 'amount_out_of_range'],
        [{ ...base, amount_wei: '1.5' }, 400, 'invalid_amount'],
        [{ ...base, amount_wei: '2000000', payer_addr: '0x123' }, 400, 'invalid_request'],
        [{ ...base, merchant_id: fixed.link_id, amount_wei: '2000000' }, 400, 'invalid_request'],
      ];
      const before = (await s.signed(m, 'GET', `/api/v1/payment-links/${any.link_id}/sessions`)).body.data.length;
      for (const [body, status, code] of cases) {
        const r = await s.request('POST', '/quickpay/v1/x402/sessions', { body });
        assert.deepEqual([r.status, r.body.code], [status, code], JSON.stringify(body));
      }
      assert.equal((await s.signed(m, 'GET', `/api/v1/payment-links/${any.link_id}/sessions`)).body.data.length, before);
      assert.equal((await s.request('GET', '/quickpay/v1/x402/sessions/qps_nope')).status, 404);
    });

    it('a deactivated link leaves the merchant’s manifest, and its own manifest shows x402 disabled', async () => {
      assert.equal((await s.signed(m, 'POST', `/api/v1/payment-links/${fixed.link_id}`, { body: { active: false } })).status, 200);
      const mm = await goatManifest(`${s.url}/quickpay/${m.merchantId}`);
      assert.deepEqual(mm.rails.x402.products, []);
      const lf = await goatManifest(`${s.url}/quickpay/${fixed.link_id}`);
      assert.equal(lf.rails.x402.enabled, false);
      const r = await s.request('POST', '/quickpay/v1/x402/sessions', { body: { merchant_id: m.merchantId, payer_addr: dev.payers[5]!.address, chain_id: dev.chainId, token_contract: usdc, product_key: fixed.link_id } });
      assert.deepEqual([r.status, r.body.code], [404, 'product_not_found']);
    });
  });
}
