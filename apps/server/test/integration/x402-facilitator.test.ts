// The x402 v2 facilitator on a real anvil: an UNMODIFIED @x402/express resource server uses Tollgate
// (`{base}/x402/v2`) as its facilitator and an UNMODIFIED @x402/fetch client (@x402/evm exact
// scheme, a viem account of a devchain payer) pays it; verify refuses each bad payment with the
// x402 reason code; settle sends one transaction per authorization (also under 20 concurrent
// settles), answers an unknown outcome as settlement_pending with the transaction hash, and a
// transaction recorded but never broadcast is sent by the reconciler.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { TestTokenArtifact } from '@tollgate/contracts';
import { rpcRequest, setAutomine, type DevChain } from '@tollgate/devchain';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import express from 'express';
import { createPublicClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { SettlementSigner, type ChainConfig } from '../../src/config/schema.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { createX402 } from '../../src/x402/index.ts';
import { backends } from '../helpers/db.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { chainConfigOf, randomAddress, startTestChain } from './watcher-fixtures.ts';
import { startSendRefusingProxy, USDC_DOMAIN, x402Body, type X402BodyOptions } from './x402-fixtures.ts';

const PRICE = 10_000n;

for (const backend of backends()) {
  describe(`x402 v2 facilitator (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    let chain: ChainConfig;
    let signer: SettlementSigner;
    let usdc: Hex;
    let usdt: Hex;
    let client: ReturnType<typeof createPublicClient>;
    let resource: Server;
    let resourceUrl: string;
    // Receiving wallets of merchants of this gateway: the facilitator settles only for them.
    const payTo = randomAddress();
    const otherPayTo = randomAddress();

    before(async () => {
      dev = await startTestChain();
      usdc = dev.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Hex;
      usdt = dev.tokens.find((t) => t.symbol === 'USDT')!.address.toLowerCase() as Hex;
      const base = chainConfigOf(dev, { confirmations: 1, finalityConfirmations: 1 });
      // USDC is the EIP-3009 token; USDT stays without the flag (the facilitator must not offer it).
      chain = { ...base, tokens: base.tokens.map((t) => (t.symbol === 'USDC' ? { ...t, eip3009: true } : t)) };
      const key = dev.payers[8]!.privateKey;
      signer = new SettlementSigner(key, privateKeyToAccount(key).address);
      s = await startTestServer({ backend, chains: [chain], config: { settlement: signer }, role: 'api', http: { rateLimits: false } });
      client = createPublicClient({ transport: http(dev.rpcUrl) });
      for (const [name, address] of [
        ['Paid', payTo],
        ['Other', otherPayTo],
      ] as const) {
        const m = await s.createMerchant({ name });
        const w = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: dev.chainId, token_symbol: 'USDC', address });
        assert.equal(w.status, 201, w.text);
      }

      // The resource server: @x402/express as its README sets it up, facilitator = Tollgate.
      const network = `eip155:${dev.chainId}` as const;
      const rs = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${s.url}/x402/v2` })).register(network, new ExactEvmServer());
      const app = express();
      app.use(paymentMiddleware({ 'GET /paid': { accepts: { scheme: 'exact', price: { amount: PRICE.toString(), asset: usdc, extra: USDC_DOMAIN }, network, payTo }, description: 'paid data' } }, rs));
      app.get('/paid', (_req, res) => void res.json({ data: 'the paid resource' }));
      resource = await new Promise<Server>((r) => {
        const srv = app.listen(0, '127.0.0.1', () => r(srv));
      });
      resourceUrl = `http://127.0.0.1:${(resource.address() as AddressInfo).port}`;
    });
    after(async () => {
      await new Promise((r) => resource?.close(r));
      await s?.close();
      await dev?.stop();
    });

    const balance = (who: Hex) => client.readContract({ address: usdc, abi: TestTokenArtifact.abi, functionName: 'balanceOf', args: [who] });
    const nowSeconds = () => Math.floor(Date.now() / 1000);
    const body = (o: Partial<X402BodyOptions> = {}) => x402Body({ chainId: dev.chainId, token: usdc, payTo, nowSeconds: nowSeconds(), payerKey: dev.payers[0]!.privateKey, amount: PRICE, ...o });
    const verify = async (b: unknown) => {
      s.clock.ms = Date.now();
      const r = await s.request('POST', '/x402/v2/verify', { body: b });
      assert.equal(r.status, 200, r.text);
      return r.body;
    };
    const settle = async (b: unknown) => {
      s.clock.ms = Date.now();
      const r = await s.request('POST', '/x402/v2/settle', { body: b });
      assert.equal(r.status, 200, r.text);
      return r.body;
    };
    const x402Rows = async () => (await s.db.query<{ tx_hash: string; status: string; order_id: string }>("SELECT tx_hash, status, order_id FROM settlements WHERE kind = 'x402' ORDER BY id")).rows;
    const executorNonce = () => client.getTransactionCount({ address: signer.executorAddress });

    it('supported: scheme exact on the chain with an EIP-3009 token, and the executor as signer', async () => {
      const r = await s.request('GET', '/x402/v2/supported');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { kinds: [{ x402Version: 2, scheme: 'exact', network: `eip155:${dev.chainId}` }], extensions: [], signers: { 'eip155:*': [signer.executorAddress] } });
    });

    it('an unmodified @x402/fetch client pays an unmodified @x402/express server through Tollgate: 200, PAYMENT-RESPONSE, tokens moved', async () => {
      s.clock.ms = Date.now();
      const payer = privateKeyToAccount(dev.payers[1]!.privateKey);
      // The test token is not one of x402's default assets: the client's spend controls must list it.
      const payFetch = wrapFetchWithPaymentFromConfig(fetch, {
        schemes: [{ network: 'eip155:*', client: new ExactEvmClient(payer) }],
        spendControls: { allowedAssets: [{ network: `eip155:${dev.chainId}`, asset: usdc, maxAmountPerPayment: PRICE.toString() }] },
      });
      const [payerBefore, payToBefore] = [await balance(payer.address), await balance(payTo)];
      const unpaid = await fetch(`${resourceUrl}/paid`);
      assert.equal(unpaid.status, 402, 'without payment the resource server asks for one');
      const res = await payFetch(`${resourceUrl}/paid`);
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(await res.json(), { data: 'the paid resource' });
      const header = res.headers.get('payment-response');
      assert.ok(header, 'the PAYMENT-RESPONSE header is set');
      const settled = decodePaymentResponseHeader(header);
      assert.equal(settled.success, true, JSON.stringify(settled));
      assert.equal(settled.network, `eip155:${dev.chainId}`);
      assert.equal(settled.payer?.toLowerCase(), payer.address.toLowerCase());
      const receipt = await client.getTransactionReceipt({ hash: settled.transaction as Hex });
      assert.equal(receipt.status, 'success');
      assert.equal(receipt.from.toLowerCase(), signer.executorAddress.toLowerCase(), 'the gateway’s executor key sent it');
      assert.equal(receipt.to?.toLowerCase(), usdc, 'a call of the token itself');
      assert.equal(await balance(payTo), payToBefore + PRICE);
      assert.equal(await balance(payer.address), payerBefore - PRICE);
      // The executor's row follows (confirmed once deep enough; settle answers at inclusion).
      let rows = await x402Rows();
      for (let i = 0; i < 100 && rows[0]?.status !== 'confirmed'; i++) {
        await new Promise((r) => setTimeout(r, 20));
        rows = await x402Rows();
      }
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.tx_hash, settled.transaction.toLowerCase());
      assert.equal(rows[0]!.status, 'confirmed');
    });

    it('verify accepts a good payment (domain from extra, or read from the token)', async () => {
      assert.deepEqual(await verify(await body()), { isValid: true, payer: privateKeyToAccount(dev.payers[0]!.privateKey).address.toLowerCase() });
      assert.equal((await verify(await body({ noExtra: true }))).isValid, true);
    });

    it('verify refuses each bad payment with its x402 reason, and settle refuses it without sending', async () => {
      const now = nowSeconds();
      const cases: [string, Partial<X402BodyOptions>, string][] = [
        ['bad signature (another domain)', { domain: { name: 'Not USD Coin', version: '2' } }, 'invalid_exact_evm_signature'],
        ['wrong recipient', { to: randomAddress() }, 'invalid_exact_evm_recipient_mismatch'],
        ['amount below the price', { value: PRICE - 1n }, 'invalid_exact_evm_payload_authorization_value_mismatch'],
        ['amount above the price (exact)', { value: PRICE + 1n }, 'invalid_exact_evm_payload_authorization_value_mismatch'],
        ['expired', { validBefore: now - 10 }, 'invalid_exact_evm_payload_authorization_valid_before'],
        ['window too short (< 6 s left)', { validBefore: now + 3 }, 'invalid_exact_evm_payload_authorization_valid_before'],
        ['not valid yet', { validAfter: now + 120 }, 'invalid_exact_evm_payload_authorization_valid_after'],
        ['insufficient balance (an unfunded payer)', { payerKey: `0x${'42'.repeat(32)}` }, 'invalid_exact_evm_insufficient_balance'],
        ['a token without EIP-3009 here', { token: usdt }, 'invalid_exact_evm_eip3009_not_supported'],
      ];
      const nonce = await executorNonce();
      const claims = async () => (await s.db.query('SELECT id FROM x402_authorizations')).rows.length;
      const claimsBefore = await claims();
      for (const [name, o, reason] of cases) {
        const b = await body(o);
        const v = await verify(b);
        assert.equal(v.isValid, false, name);
        assert.equal(v.invalidReason, reason, `${name}: ${JSON.stringify(v)}`);
        const st = await settle(b);
        assert.equal(st.success, false, name);
        assert.equal(st.errorReason, reason, `${name} (settle): ${JSON.stringify(st)}`);
        assert.equal(st.transaction, '');
      }
      const other = await body();
      other.paymentRequirements = { ...other.paymentRequirements, network: 'eip155:1' };
      other.paymentPayload.accepted = other.paymentRequirements;
      assert.equal((await verify(other)).invalidReason, 'invalid_network');
      assert.equal((await verify({ ...(await body()), x402Version: 1 })).invalidReason, 'invalid_x402_version');
      assert.equal(await executorNonce(), nonce, 'nothing was sent');
      assert.equal(await claims(), claimsBefore, 'no refused payment holds a claim');
    });

    it('a 65-byte signature whose v byte is no recovery id (0x11): refused as invalid_exact_evm_signature by verify and settle (was a 500), nothing sent', async () => {
      const nonce = await executorNonce();
      const b = await body();
      const sig: string = b.paymentPayload.payload.signature;
      b.paymentPayload.payload.signature = `${sig.slice(0, 130)}11` as Hex;
      const v = await verify(b);
      assert.deepEqual([v.isValid, v.invalidReason], [false, 'invalid_exact_evm_signature'], JSON.stringify(v));
      const st = await settle(b);
      assert.deepEqual([st.success, st.errorReason, st.transaction], [false, 'invalid_exact_evm_signature', ''], JSON.stringify(st));
      assert.equal(await executorNonce(), nonce, 'nothing was sent');
    });

    it('a settled authorization is refused as replayed: by our claim, and by the chain when settled elsewhere', async () => {
      const b = await body();
      const st = await settle(b);
      assert.equal(st.success, true, JSON.stringify(st));
      assert.equal((await verify(b)).invalidReason, 'invalid_exact_evm_nonce_already_used');
      // The same payload settled again: the same transaction, nothing new sent.
      const nonce = await executorNonce();
      assert.deepEqual(await settle(b), st);
      assert.equal(await executorNonce(), nonce);
      // The settled payload offered for other terms (another payee, another price) pays nothing there.
      for (const terms of [{ payTo: otherPayTo }, { amount: (PRICE * 2n).toString() }]) {
        const reused = structuredClone(b);
        reused.paymentRequirements = { ...reused.paymentRequirements, ...terms };
        reused.paymentPayload.accepted = reused.paymentRequirements;
        const r = await settle(reused);
        assert.equal(r.success, false, JSON.stringify(terms));
        assert.equal(r.errorReason, 'invalid_exact_evm_nonce_already_used', JSON.stringify(r));
      }
      // Another signature for the same nonce (another validBefore) is another payload: refused.
      const auth = b.paymentPayload.payload.authorization;
      const again = await body({ nonce: auth.nonce, validBefore: Number(auth.validBefore) + 1 });
      assert.equal((await settle(again)).errorReason, 'invalid_exact_evm_nonce_already_used');
      // Settled by someone else on chain (not through Tollgate): authorizationState says used.
      const elsewhere = await body();
      const a = elsewhere.paymentPayload.payload.authorization;
      const sig = elsewhere.paymentPayload.payload.signature;
      const { parseSignature, createWalletClient } = await import('viem');
      const p = parseSignature(sig);
      const wallet = createWalletClient({ account: privateKeyToAccount(dev.payers[5]!.privateKey), transport: http(dev.rpcUrl) });
      const hash = await wallet.writeContract({
        chain: null,
        address: usdc,
        abi: TestTokenArtifact.abi,
        functionName: 'transferWithAuthorization',
        args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, Number(p.v), p.r, p.s],
      });
      assert.equal((await client.waitForTransactionReceipt({ hash, pollingInterval: 20 })).status, 'success');
      const v = await verify(elsewhere);
      assert.equal(v.invalidReason, 'invalid_exact_evm_nonce_already_used', JSON.stringify(v));
      const refused = await settle(elsewhere);
      assert.equal(refused.success, false);
      assert.equal(refused.errorReason, 'invalid_exact_evm_nonce_already_used', JSON.stringify(refused));
      assert.equal((await s.db.query('SELECT 1 FROM x402_authorizations WHERE nonce = $1', [a.nonce.toLowerCase()])).rows.length, 0, 'a refused simulation gives the claim back');
    });

    it('20 concurrent settles of one payload: exactly one transaction, every answer names it', async () => {
      const b = await body();
      const [rowsBefore, nonceBefore, payToBefore] = [(await x402Rows()).length, await executorNonce(), await balance(payTo)];
      s.clock.ms = Date.now();
      const answers = await Promise.all(Array.from({ length: 20 }, () => s.request('POST', '/x402/v2/settle', { body: b })));
      for (const a of answers) assert.equal(a.status, 200, a.text);
      const hashes = new Set(answers.map((a) => a.body.transaction));
      assert.equal(hashes.size, 1, `one transaction: ${[...hashes].join(', ')}`);
      for (const a of answers) assert.equal(a.body.success, true, a.text);
      assert.equal((await x402Rows()).length, rowsBefore + 1);
      assert.equal(await executorNonce(), nonceBefore + 1);
      assert.equal(await balance(payTo), payToBefore + PRICE);
    });

    it('two gateway processes (two pools, two executors of one key) settling one payload at once: one transaction', { skip: backend !== 'postgres' && 'several processes share one database on Postgres only' }, async () => {
      const db2 = await openPostgres(s.database.url!, { max: 10 });
      try {
        const other = createX402(db2, s.tg.deps.config, s.clock);
        const b = await body();
        const [rowsBefore, nonceBefore] = [(await x402Rows()).length, await executorNonce()];
        s.clock.ms = Date.now();
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? other : s.tg.deps.x402).settle(b)));
        assert.equal(new Set(answers.map((a) => a.transaction)).size, 1, JSON.stringify(answers.map((a) => a.transaction)));
        for (const a of answers) assert.equal(a.success, true, JSON.stringify(a));
        assert.equal((await x402Rows()).length, rowsBefore + 1);
        assert.equal(await executorNonce(), nonceBefore + 1);
      } finally {
        await db2.close();
      }
    });

    it('an unknown outcome is answered settlement_pending with the transaction hash; a repeat returns the same transaction', async () => {
      const quick = createX402(s.db, s.tg.deps.config, s.clock, { settleWaitMs: 400, pollMs: 50 });
      await setAutomine(dev.rpcUrl, false);
      let pending;
      try {
        const b = await body();
        s.clock.ms = Date.now();
        pending = await quick.settle(b);
        assert.equal(pending.success, false);
        assert.equal(pending.errorReason, 'settlement_pending');
        assert.match(pending.transaction, /^0x[0-9a-f]{64}$/);
        assert.equal(pending.payer, b.paymentPayload.payload.authorization.from.toLowerCase());
        await setAutomine(dev.rpcUrl, true);
        await rpcRequest(dev.rpcUrl, 'evm_mine', []);
        const done = await settle(b);
        assert.deepEqual(done, { success: true, transaction: pending.transaction, network: pending.network, payer: pending.payer });
      } finally {
        await setAutomine(dev.rpcUrl, true);
      }
    });

    it('a transaction recorded but never broadcast (a crash between the two) is sent by the reconciler, once', async () => {
      const proxy = await startSendRefusingProxy(dev.rpcUrl);
      try {
        const viaProxy = { ...s.tg.deps.config, chains: [{ ...chain, rpcUrl: proxy.url }] };
        const crashed = createX402(s.db, viaProxy, s.clock, { settleWaitMs: 300, pollMs: 50 });
        const b = await body();
        const nonceBefore = await executorNonce();
        s.clock.ms = Date.now();
        const first = await crashed.settle(b);
        assert.equal(first.errorReason, 'settlement_pending', JSON.stringify(first));
        const row = (await x402Rows()).find((r) => r.tx_hash === first.transaction);
        assert.equal(row?.status, 'pending', 'recorded before the broadcast that failed');
        assert.equal(await executorNonce(), nonceBefore, 'nothing reached the chain');
        await s.tg.deps.x402.reconcile();
        const after = (await x402Rows()).find((r) => r.tx_hash === first.transaction);
        assert.equal(after?.status, 'confirmed', 'the reconciler sent the recorded bytes');
        assert.equal(await executorNonce(), nonceBefore + 1);
        const again = await settle(b);
        assert.equal(again.success, true);
        assert.equal(again.transaction, first.transaction, 'the same transaction');
        assert.equal(await executorNonce(), nonceBefore + 1, 'exactly one transaction');
      } finally {
        await proxy.close();
      }
    });
  });
}
