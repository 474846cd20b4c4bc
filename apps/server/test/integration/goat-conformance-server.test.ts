// GOAT Network's merchant server SDKs against Tollgate (issue 28, docs/migrating.md): for each SDK
// call, the request the SDK sends (its signing rule, headers and body, re-implemented in
// helpers/goat-wire.ts) and every field it reads from the answer, as the TypeScript SDK (0.1.0–0.4.0)
// computes its result and as the Go SDK's structs decode it — on anvil, PGlite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { mine, transferToken } from '@tollgate/devchain';
import { toSignableTypedData } from '@tollgate/contracts';
import { encodeAbiParameters, keccak256, pad, stringToBytes, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { backends } from '../helpers/db.ts';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { waitUntil } from '../helpers/reliability.ts';
import type { Creds } from '../helpers/server.ts';
import { GO, goDecodeProblems, goStatusOk, goatOrderOf, goatRequest, parseX402Header, type GoatAnswer } from '../helpers/goat-wire.ts';
import { setupDelegateMerchant, startDelegateStack, type DelegateStack } from './delegate-fixtures.ts';

const LOGO = 'https://shop.example/logo.png';
const CALLDATA = encodeAbiParameters([{ type: 'bytes32' }], [pad('0x2a', { size: 32 })]);

for (const backend of backends()) {
  describe(`GOAT Network server SDK wire against Tollgate (${backend})`, () => {
    let st: DelegateStack;
    let direct: Creds;
    let delegate: Creds;
    let seq = 0;
    const now = () => Math.floor(st.s.clock.now() / 1000);
    const call = (m: Creds | undefined, method: 'GET' | 'POST', path: string, opts: { body?: Record<string, unknown>; nonce?: string; expect402?: boolean; nowSeconds?: number } = {}) => goatRequest(st.s.url, m, method, path, { nowSeconds: now(), ...opts });
    const payer = (i = 0) => st.dev.payers[i]!;
    /** createOrderRaw's body: the five fields, then token_contract / callback_calldata / recover_existing_order when given. */
    const orderBody = (over: Record<string, unknown> = {}) => ({
      dapp_order_id: `goat-${randomUUID()}`,
      chain_id: st.chain.chainId,
      token_symbol: 'USDC',
      from_address: payer().address,
      amount_wei: String(1_000_000 + ++seq),
      ...over,
    });
    const createOrder = (m: Creds, body: Record<string, unknown>) => call(m, 'POST', '/api/v1/orders', { body, expect402: true });
    const noGoProblems = (a: GoatAnswer, shape: (typeof GO)[keyof typeof GO]) => {
      assert.ok(goStatusOk(a.status), `the Go SDK accepts only 200 or 402, got ${a.status}`);
      assert.deepEqual(goDecodeProblems(a.body, shape), []);
    };

    before(async () => {
      st = await startDelegateStack(backend);
      direct = await st.s.createMerchant({ name: 'Goat Shop', topUp: '10.00', body: { logo_url: LOGO } });
      for (const t of st.chain.tokens) {
        const r = await st.s.admin('POST', `/admin/v1/merchants/${direct.merchantId}/wallets`, { chain_id: st.chain.chainId, token_symbol: t.symbol, address: MERCHANT_WALLET });
        assert.equal(r.status, 201, r.text);
      }
      delegate = await setupDelegateMerchant(st);
    });
    after(async () => {
      await st?.close();
    });

    it('auth: the SDK signing is accepted; a replayed X-Nonce is 401 "Replay request detected" in `error`; a stale X-Timestamp is 401', async () => {
      const nonce = randomUUID();
      const first = await createOrder(direct, orderBody());
      assert.equal(first.status, 402, JSON.stringify(first.body));
      const id = first.body.order_id as string;
      assert.equal((await call(direct, 'GET', `/api/v1/orders/${id}`, { nonce })).status, 200);
      const replay = await call(direct, 'GET', `/api/v1/orders/${id}`, { nonce });
      assert.deepEqual([replay.error?.status, replay.error?.message, replay.error?.code], [401, 'Replay request detected', 'replay_detected']);
      const stale = await call(direct, 'GET', `/api/v1/orders/${id}`, { nowSeconds: now() - 3600 });
      assert.equal(stale.error?.status, 401);
      assert.equal(stale.error?.code, 'timestamp_out_of_window');
      assert.deepEqual(goDecodeProblems(stale.body, GO.APIError), []);
    });

    it('createOrder / createOrderRaw (DIRECT): 402, and the normalized Order has expiresAt and payToChainId from extensions.goatx402', async () => {
      const body = orderBody({ token_symbol: 'USDT' });
      const r = await createOrder(direct, body);
      assert.equal(r.status, 402, JSON.stringify(r.body));
      noGoProblems(r, GO.X402PaymentRequired);
      assert.deepEqual(r.body.extensions.goatx402, r.body.extensions.paymentTerms, 'one object under both names');
      assert.deepEqual(parseX402Header(r.headers.get('payment-required')), r.body, 'parseX402Header reads the same terms from the header');
      const order = goatOrderOf(r.body, { chainId: body.chain_id, tokenSymbol: body.token_symbol, amountWei: body.amount_wei });
      const rec = (await call(direct, 'GET', `/api/v1/orders/${order.orderId}`)).body;
      const usdt = st.chain.tokens.find((t) => t.symbol === 'USDT')!;
      assert.deepEqual(order, {
        orderId: rec.order_id,
        flow: 'ERC20_DIRECT',
        tokenSymbol: 'USDT',
        tokenContract: usdt.address,
        payToAddress: MERCHANT_WALLET,
        fromChainId: st.chain.chainId,
        payToChainId: st.chain.chainId,
        amountWei: body.amount_wei,
        expiresAt: rec.expires_at,
        calldataSignRequest: undefined,
      });
      assert.ok(order.expiresAt > now(), 'expiresAt is the order expiry in Unix seconds, not 0');
      assert.equal(r.body.extensions.goatx402.paymentMethod, 'transfer');
      assert.equal(r.body.extensions.goatx402.receiveType, 'DIRECT');
    });

    it('createOrder with recover_existing_order (0.4.0): the same request answers the same order; other terms, or without the flag, stay 409', async () => {
      const body = orderBody();
      const first = await createOrder(direct, body);
      assert.equal(first.status, 402, JSON.stringify(first.body));
      const again = await createOrder(direct, { ...body, recover_existing_order: true });
      assert.equal(again.status, 402, JSON.stringify(again.body));
      assert.equal(again.body.order_id, first.body.order_id);
      assert.deepEqual(again.body.extensions.goatx402, first.body.extensions.goatx402);
      const plain = await createOrder(direct, body);
      assert.equal(plain.error?.code, 'order_already_exists');
      const other = await createOrder(direct, { ...body, amount_wei: '7777777', recover_existing_order: true });
      assert.equal(other.error?.code, 'order_already_exists', 'another amount under the same dapp_order_id is not recovered');
      assert.equal((await call(direct, 'POST', `/api/v1/orders/${first.body.order_id}/cancel`, { body: {} })).status, 200);
      const cancelled = await createOrder(direct, { ...body, recover_existing_order: true });
      assert.equal(cancelled.error?.code, 'order_already_exists', 'a cancelled order is not handed out again');
    });

    it('getOrderStatus and getOrderProof on a paid order: every field the SDKs read; the proof hash rule', async () => {
      const body = orderBody({ from_address: payer(1).address });
      const created = await createOrder(direct, body);
      assert.equal(created.status, 402, JSON.stringify(created.body));
      const id = created.body.order_id as string;
      const usdc = st.chain.tokens.find((t) => t.symbol === 'USDC')!;
      const tx = await transferToken({ rpcUrl: st.dev.rpcUrl, chainId: st.chain.chainId, privateKey: payer(1).privateKey, token: usdc.address, to: MERCHANT_WALLET as Hex, amount: BigInt(body.amount_wei) });
      await mine(st.dev.rpcUrl, 2);
      const status = await waitUntil(
        async () => {
          const a = await call(direct, 'GET', `/api/v1/orders/${id}`);
          return a.body.status === 'INVOICED' ? a : undefined;
        },
        20_000,
        () => `order ${id} not INVOICED`,
        50,
      );
      noGoProblems(status, GO.OrderStatus);
      const s = status.body;
      assert.deepEqual(
        [s.order_id, s.merchant_id, s.dapp_order_id, s.chain_id, s.token_contract, s.token_symbol, s.from_address, s.amount_wei, s.tx_hash],
        [id, direct.merchantId, body.dapp_order_id, st.chain.chainId, usdc.address, 'USDC', payer(1).address.toLowerCase(), body.amount_wei, tx],
      );
      assert.ok(!Number.isNaN(Date.parse(s.confirmed_at)), 'confirmed_at is a timestamp string');

      const proof = await call(direct, 'GET', `/api/v1/orders/${id}/proof`);
      noGoProblems(proof, GO.OrderProofResponse);
      const p = proof.body.payload;
      assert.deepEqual(
        [p.order_id, p.tx_hash, p.from_addr, p.to_addr, p.amount_wei, p.chain_id, p.from_chain_id, p.flow, p.status],
        [id, tx, payer(1).address.toLowerCase(), MERCHANT_WALLET, body.amount_wei, st.chain.chainId, st.chain.chainId, 'ERC20_DIRECT', 'INVOICED'],
      );
      assert.equal(typeof p.log_index, 'number');
      assert.equal(proof.body.signature, keccak256(stringToBytes(`${p.order_id}${p.tx_hash}${p.log_index}${p.from_addr}${p.to_addr}${p.amount_wei}${p.from_chain_id}`)));
    });

    it('cancelOrder: 200 with order_id (the Go SDK takes nothing but 200); a second cancel is an error with its code and a message in `error`', async () => {
      const created = await createOrder(direct, orderBody());
      const id = created.body.order_id as string;
      const r = await call(direct, 'POST', `/api/v1/orders/${id}/cancel`, { body: {} });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual([r.body.order_id, r.body.status], [id, 'CANCELLED']);
      const again = await call(direct, 'POST', `/api/v1/orders/${id}/cancel`, { body: {} });
      assert.equal(again.error?.code, 'order_not_cancellable');
      assert.match(again.error!.message, /CANCELLED/);
      assert.equal((await call(direct, 'GET', `/api/v1/orders/${id}/proof`)).error?.code, 'proof_not_available');
    });

    it('getMerchant (public, no signature): logo, name, receive_type and the tokens (wallets for TypeScript, supported_tokens for Go)', async () => {
      const r = await call(undefined, 'GET', `/merchants/${direct.merchantId}`);
      noGoProblems(r, GO.MerchantInfo);
      const b = r.body;
      assert.deepEqual([b.merchant_id, b.name, b.logo, b.logo_url, b.receive_type], [direct.merchantId, 'Goat Shop', LOGO, LOGO, 'DIRECT']);
      const tokens = st.chain.tokens.map((t) => ({ chain_id: st.chain.chainId, symbol: t.symbol, token_contract: t.address, decimals: t.decimals }));
      const bySymbol = (a: { symbol: string }, z: { symbol: string }) => a.symbol.localeCompare(z.symbol);
      assert.deepEqual([...b.supported_tokens].sort(bySymbol), [...tokens].sort(bySymbol));
      // TypeScript: supportedTokens from wallets[] { chain_id, token_symbol, token_contract }
      const ts = b.wallets.map((w: any) => ({ chain_id: w.chain_id, symbol: w.token_symbol, token_contract: w.token_contract, decimals: w.decimals }));
      assert.deepEqual(ts.sort(bySymbol), [...tokens].sort(bySymbol));
      const d = await call(undefined, 'GET', `/merchants/${delegate.merchantId}`);
      assert.deepEqual([d.body.receive_type, d.body.logo], ['DELEGATE', undefined], 'no logo configured: none sent');
      const missing = await call(undefined, 'GET', '/merchants/no-such-merchant');
      assert.deepEqual([missing.error?.status, missing.error?.code], [404, 'merchant_not_found']);
    });

    it('createCheckoutSession (DIRECT, 0.2.0+): 200 with checkout_id, checkout_type, url, expires_at; nested values as signed JSON strings', async () => {
      const body = {
        checkout_type: 'DIRECT',
        price: '9.99',
        client_reference_id: `ref-${randomUUID()}`,
        expires_in: 1800,
        payment_rails: 'crypto',
        line_items_json: JSON.stringify([{ name: 'Mug', amount: '9.99', quantity: 1 }]),
        public_metadata_json: JSON.stringify({ cart: 'c1' }),
      };
      const r = await call(direct, 'POST', '/api/v1/checkout/sessions', { body });
      noGoProblems(r, GO.CheckoutSession);
      assert.equal(r.body.checkout_type, 'DIRECT');
      assert.equal(typeof r.body.checkout_id, 'string');
      assert.ok(r.body.url.startsWith(st.s.tg.deps.config.publicBaseUrl));
      assert.equal(r.body.expires_at, now() + 1800);
    });

    it('createDelegateCheckoutSession (0.3.0) / createCheckoutSession DELEGATE: refused with delegate_checkout_unsupported, nothing stored', async () => {
      const count = async () => Number((await st.s.db.query<{ n: string }>('SELECT count(*) AS n FROM checkout_sessions')).rows[0]!.n);
      const before = await count();
      const usdc = st.chain.tokens.find((t) => t.symbol === 'USDC')!;
      // the deprecated wrapper's body: fixed_amount_wei, the one token wrapped into acceptable_tokens
      const body = {
        checkout_type: 'DELEGATE',
        chain_id: st.chain.chainId,
        fixed_amount_wei: '1000000',
        callback_calldata: CALLDATA,
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/cancel',
        expires_in: 1800,
        acceptable_tokens: JSON.stringify([usdc.address]),
      };
      const r = await call(delegate, 'POST', '/api/v1/checkout/sessions', { body });
      assert.deepEqual([r.error?.status, r.error?.code], [400, 'delegate_checkout_unsupported']);
      assert.match(r.error!.message, /callback_calldata/);
      assert.equal(r.body.param, 'checkout_type');
      assert.equal(await count(), before);
    });

    it('DELEGATE createOrder with callback_calldata and submitCalldataSignature: signatureEndpoint, a Go-decodable calldata_sign_request, {status: ok, order_id}', async () => {
      const body = orderBody({ callback_calldata: CALLDATA, from_address: payer(2).address });
      const r = await createOrder(delegate, body);
      assert.equal(r.status, 402, JSON.stringify(r.body));
      noGoProblems(r, GO.X402PaymentRequired);
      const order = goatOrderOf(r.body, { chainId: body.chain_id, tokenSymbol: 'USDC', amountWei: body.amount_wei });
      assert.deepEqual([order.flow, order.payToAddress, order.payToChainId, order.expiresAt > now()], ['ERC20_3009', st.chain.settlementContract, st.chain.chainId, true]);
      assert.equal(r.body.extensions.goatx402.receiveType, 'DELEGATE');
      assert.equal(r.body.extensions.goatx402.signatureEndpoint, `${st.s.tg.deps.config.publicBaseUrl}/api/v1/orders/${order.orderId}/calldata-signature`);
      const req = order.calldataSignRequest;
      assert.equal(req.primaryType, 'Eip3009CallbackData');
      assert.deepEqual(Object.keys(req.message).sort(), ['amount', 'calldataHash', 'calldataNonce', 'deadline', 'orderId', 'owner', 'payer', 'token']);
      const signature = await privateKeyToAccount(payer(2).privateKey).signTypedData(toSignableTypedData(req) as never);
      const sub = await call(delegate, 'POST', `/api/v1/orders/${order.orderId}/calldata-signature`, { body: { signature } });
      assert.equal(sub.status, 200, JSON.stringify(sub.body));
      assert.deepEqual(sub.body, { status: 'ok', order_id: order.orderId });
      const other = await privateKeyToAccount(payer(3).privateKey).signTypedData(toSignableTypedData(req) as never);
      const wrong = await call(delegate, 'POST', `/api/v1/orders/${order.orderId}/calldata-signature`, { body: { signature: other } });
      assert.deepEqual([wrong.error?.status, wrong.error?.code], [400, 'invalid_calldata_signature']);
    });
  });
}
