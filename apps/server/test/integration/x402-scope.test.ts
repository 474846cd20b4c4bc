// Whom the x402 facilitator settles for, on a real anvil (issue #24 item 4): the executor key pays
// the gas of every settlement, so the facilitator refuses 0-value authorizations and pay-to
// addresses that are not receiving wallets of this deployment's merchants (nor a chain's settlement
// contract) unless the operator lists them (`x402.facilitate_for`, `*` for anyone); verify answers
// the same reasons as settle, and a refused settle sends, records and announces nothing. An
// UNMODIFIED @x402/express resource server of a stranger, paid by an UNMODIFIED @x402/fetch client,
// moves no money; the UNMODIFIED HTTPFacilitatorClient reads the refusals. verify and settle are
// rate-limited per client address and per payer (429 rate_limited with Retry-After).
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { TestTokenArtifact } from '@tollgate/contracts';
import type { DevChain } from '@tollgate/devchain';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import express from 'express';
import { createPublicClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { SettlementSigner, type ChainConfig } from '../../src/config/schema.ts';
import { createX402 } from '../../src/x402/index.ts';
import { backends } from '../helpers/db.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { chainConfigOf, randomAddress, startTestChain } from './watcher-fixtures.ts';
import { USDC_DOMAIN, x402Body, type X402BodyOptions } from './x402-fixtures.ts';

const PRICE = 10_000n;

for (const backend of backends()) {
  describe(`x402 facilitator scope (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    let chain: ChainConfig;
    let signer: SettlementSigner;
    let usdc: Hex;
    let client: ReturnType<typeof createPublicClient>;
    let facilitator: HTTPFacilitatorClient;
    const merchantWallet = randomAddress();
    const settlementContract = randomAddress();

    before(async () => {
      dev = await startTestChain();
      usdc = dev.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Hex;
      const base = chainConfigOf(dev, { confirmations: 1, finalityConfirmations: 1 });
      chain = { ...base, settlementContract, tokens: base.tokens.map((t) => (t.symbol === 'USDC' ? { ...t, eip3009: true } : t)) };
      const key = dev.payers[8]!.privateKey;
      signer = new SettlementSigner(key, privateKeyToAccount(key).address);
      s = await startTestServer({ backend, chains: [chain], config: { settlement: signer }, role: 'api', http: { rateLimits: false } });
      client = createPublicClient({ transport: http(dev.rpcUrl) });
      const m = await s.createMerchant({ name: 'Scoped' });
      const w = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: dev.chainId, token_symbol: 'USDC', address: merchantWallet });
      assert.equal(w.status, 201, w.text);
      facilitator = new HTTPFacilitatorClient({ url: `${s.url}/x402/v2` });
    });
    after(async () => {
      await s?.close();
      await dev?.stop();
    });

    const balance = (who: Hex) => client.readContract({ address: usdc, abi: TestTokenArtifact.abi, functionName: 'balanceOf', args: [who] });
    const body = (o: Partial<X402BodyOptions> = {}) => x402Body({ chainId: dev.chainId, token: usdc, payTo: merchantWallet, nowSeconds: Math.floor(Date.now() / 1000), payerKey: dev.payers[0]!.privateKey, amount: PRICE, ...o });
    const executorNonce = () => client.getTransactionCount({ address: signer.executorAddress });
    const recorded = async () => ({
      claims: (await s.db.query('SELECT 1 FROM x402_authorizations')).rows.length,
      txs: (await s.db.query("SELECT 1 FROM settlements WHERE kind = 'x402'")).rows.length,
      events: (await s.db.query("SELECT 1 FROM webhook_events WHERE event = 'x402.settlement.confirmed'")).rows.length,
    });
    /** Verify and settle through the unmodified x402 facilitator client; both must refuse with `reason`. */
    const refusedBoth = async (b: Awaited<ReturnType<typeof body>>, reason: string, name: string) => {
      s.clock.ms = Date.now();
      const v = await facilitator.verify(b.paymentPayload as never, b.paymentRequirements as never);
      assert.deepEqual([v.isValid, v.invalidReason], [false, reason], `${name} (verify): ${JSON.stringify(v)}`);
      const st = await facilitator.settle(b.paymentPayload as never, b.paymentRequirements as never);
      assert.deepEqual([st.success, st.errorReason, st.transaction], [false, reason, ''], `${name} (settle): ${JSON.stringify(st)}`);
    };

    it('a 0-value authorization is refused by verify and settle (to a merchant wallet or anyone): nothing sent, recorded or announced', async () => {
      const [nonce, before] = [await executorNonce(), await recorded()];
      await refusedBoth(await body({ amount: 0n }), 'invalid_exact_evm_zero_value', 'to the merchant wallet');
      await refusedBoth(await body({ amount: 0n, payTo: randomAddress() }), 'invalid_exact_evm_zero_value', 'to a stranger');
      // 0 authorized against a price: the value is checked too, not only the price.
      await refusedBoth(await body({ value: 0n }), 'invalid_exact_evm_zero_value', 'value 0 for a price');
      await s.tg.deps.x402.reconcile();
      assert.equal(await executorNonce(), nonce, 'no gas spent');
      assert.deepEqual(await recorded(), before);
    });

    it('a payTo that is no merchant’s wallet here is refused as pay_to_not_served; a stranger’s unmodified @x402/express server paid by @x402/fetch moves no money', async () => {
      const stranger = randomAddress();
      const [nonce, before] = [await executorNonce(), await recorded()];
      await refusedBoth(await body({ payTo: stranger }), 'pay_to_not_served', 'a stranger');
      // A merchant's receiving address on the chain is served whichever token it was registered for.
      const m = await s.createMerchant({ name: 'Tether' });
      const usdtWallet = randomAddress();
      const w = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: dev.chainId, token_symbol: 'USDT', address: usdtWallet });
      assert.equal(w.status, 201, w.text);
      const toUsdtWallet = await body({ payTo: usdtWallet });
      assert.equal((await facilitator.verify(toUsdtWallet.paymentPayload as never, toUsdtWallet.paymentRequirements as never)).isValid, true);

      const network = `eip155:${dev.chainId}` as const;
      const rs = new x402ResourceServer(facilitator).register(network, new ExactEvmServer());
      const app = express();
      app.use(paymentMiddleware({ 'GET /paid': { accepts: { scheme: 'exact', price: { amount: PRICE.toString(), asset: usdc, extra: USDC_DOMAIN }, network, payTo: stranger }, description: 'paid data' } }, rs));
      app.get('/paid', (_req, res) => void res.json({ data: 'the paid resource' }));
      const resource = await new Promise<Server>((r) => {
        const srv = app.listen(0, '127.0.0.1', () => r(srv));
      });
      try {
        const payer = privateKeyToAccount(dev.payers[1]!.privateKey);
        const payFetch = wrapFetchWithPaymentFromConfig(fetch, {
          schemes: [{ network: 'eip155:*', client: new ExactEvmClient(payer) }],
          spendControls: { allowedAssets: [{ network, asset: usdc, maxAmountPerPayment: PRICE.toString() }] },
        });
        const payerBefore = await balance(payer.address);
        s.clock.ms = Date.now();
        const res = await payFetch(`http://127.0.0.1:${(resource.address() as AddressInfo).port}/paid`);
        assert.equal(res.status, 402, 'the resource server does not serve a payment its facilitator refuses');
        assert.equal(await balance(stranger), 0n);
        assert.equal(await balance(payer.address), payerBefore);
      } finally {
        await new Promise((r) => resource.close(r));
      }
      assert.equal(await executorNonce(), nonce, 'no gas spent');
      assert.deepEqual(await recorded(), before);
    });

    it('served: a merchant wallet, the chain’s settlement contract, and what the operator lists (x402.facilitate_for, or * for anyone)', async () => {
      const listed = randomAddress();
      const listing = createX402(s.db, { ...s.tg.deps.config, x402FacilitateFor: [listed] }, s.clock);
      const anyone = createX402(s.db, { ...s.tg.deps.config, x402FacilitateFor: ['*'] }, s.clock);
      s.clock.ms = Date.now();
      const verified = async (x: typeof listing, payTo: Hex) => (await x.verify(await body({ payTo }))).isValid;
      assert.equal(await verified(s.tg.deps.x402, merchantWallet), true);
      assert.equal(await verified(s.tg.deps.x402, settlementContract), true);
      assert.equal(await verified(s.tg.deps.x402, listed), false, 'not listed by default');
      assert.equal(await verified(listing, listed), true);
      assert.equal(await verified(listing, randomAddress()), false, 'a list is not everyone');
      assert.equal(await verified(anyone, randomAddress()), true);
      // Settled for real: the listed address receives the payment.
      const settled = await listing.settle(await body({ payTo: listed }));
      assert.equal(settled.success, true, JSON.stringify(settled));
      assert.equal(await balance(listed), PRICE);
      // Even for anyone, 0 is never settled.
      assert.equal((await anyone.settle(await body({ amount: 0n, payTo: randomAddress() }))).errorReason, 'invalid_exact_evm_zero_value');
    });
  });
}

describe('x402 verify and settle: rate limits per client address and per payer', () => {
  let dev: DevChain;
  let s: TestServer;
  let usdc: Hex;
  const payTo = randomAddress();

  before(async () => {
    dev = await startTestChain();
    usdc = dev.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Hex;
    const base = chainConfigOf(dev, { confirmations: 1, finalityConfirmations: 1 });
    const chain = { ...base, tokens: base.tokens.map((t) => (t.symbol === 'USDC' ? { ...t, eip3009: true } : t)) };
    const key = dev.payers[8]!.privateKey;
    s = await startTestServer({
      backend: 'pglite',
      chains: [chain],
      config: { settlement: new SettlementSigner(key, privateKeyToAccount(key).address) },
      role: 'api',
      http: { rateLimits: { machine_payment: { max: 8, timeWindowMs: 60_000 }, machine_payer: { max: 3, timeWindowMs: 60_000 } } },
    });
  });
  after(async () => {
    await s?.close();
    await dev?.stop();
  });

  const assert429 = (r: { status: number; text: string; body: any; headers: Headers }, name: string) => {
    assert.equal(r.status, 429, `${name}: ${r.text}`);
    assert.equal(r.body.code, 'rate_limited');
    const retry = Number(r.headers.get('retry-after'));
    assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${r.headers.get('retry-after')}`);
  };
  const bodyOf = (payerKey: Hex) => x402Body({ chainId: dev.chainId, token: usdc, payTo, nowSeconds: Math.floor(Date.now() / 1000), payerKey });
  const post = async (route: 'verify' | 'settle', payerKey: Hex) => s.request('POST', `/x402/v2/${route}`, { body: await bodyOf(payerKey) });

  it('one payer: 3 per route, then 429 rate_limited with Retry-After whatever the address; others go on until the address’s 8', async () => {
    const a = dev.payers[0]!.privateKey;
    for (let i = 0; i < 3; i++) assert.equal((await post('verify', a)).status, 200, `verify ${i + 1}`);
    assert429(await post('verify', a), 'the payer’s 4th verify');
    // Per route: the payer's settles have their own budget (refused here, pay_to_not_served: nothing is sent).
    const st = await post('settle', a);
    assert.deepEqual([st.status, st.body.errorReason], [200, 'pay_to_not_served'], st.text);
    // Another payer from the same address is not limited by the first one's budget.
    assert.equal((await post('verify', dev.payers[1]!.privateKey)).status, 200);
    // The address's own limit (8 per route) counts every request, the refused 4th too: 5 so far.
    for (const p of [2, 3, 4]) assert.equal((await post('verify', dev.payers[p]!.privateKey)).status, 200, `payer ${p}`);
    assert429(await post('verify', dev.payers[5]!.privateKey), 'the address’s 9th verify');
  });
});
