// DELEGATE orders through the HTTP API on a real anvil chain with the settlement contract and the
// example adapter deployed: callback registration (admin API and CLI), flow by token capability,
// pay-to = the settlement contract, calldata_sign_request per docs/delegate.md, and the calldata-signature
// route (right signer accepted once; wrong signer, tampered calldata, another order's signature,
// expired deadline refused).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { toSignableTypedData, orderIdToBytes32 } from '@tollgate/contracts';
import { encodeAbiParameters, keccak256, pad, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody } from '../helpers/orders.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { TEST_ADMIN_TOKEN, type Creds } from '../helpers/server.ts';
import { setupDelegateMerchant, startDelegateStack, type DelegateStack } from './delegate-fixtures.ts';

const ACCOUNT = pad('0x1234', { size: 32 });
const CALLDATA = encodeAbiParameters([{ type: 'bytes32' }], [ACCOUNT]);

for (const backend of backends()) {
  describe(`DELEGATE orders (${backend})`, () => {
    let st: DelegateStack;
    let m: Creds;
    before(async () => {
      st = await startDelegateStack(backend, { role: 'api' });
      m = await setupDelegateMerchant(st);
    });
    after(async () => {
      await st?.close();
    });

    const payer = () => st.dev.payers[0]!;
    const create = (over: Record<string, unknown> = {}) => st.s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: st.chain.chainId, from_address: payer().address, ...over }) });

    it('registers callbacks: one active per chain, listed with spent and core addresses', async () => {
      const list = await st.s.admin('GET', `/admin/v1/merchants/${m.merchantId}/callbacks`);
      assert.equal(list.status, 200, list.text);
      assert.equal(list.body.length, 1);
      const cb = list.body[0];
      assert.equal(cb.callback_contract, st.setup.adapter!.address);
      assert.equal(cb.spent_address, st.chain.settlementContract);
      assert.equal(cb.core_address, st.chain.settlementContract);
      assert.match(cb.callback_id, /^cb_/);
      // a DIRECT merchant has no callbacks; an unknown chain and a zero address are refused
      const direct = await st.s.createMerchant({ name: 'Direct' });
      const body = { chain_id: st.chain.chainId, callback_contract: st.setup.adapter!.address, eip712_name: 'X', eip712_version: '1' };
      assert.equal((await st.s.admin('POST', `/admin/v1/merchants/${direct.merchantId}/callbacks`, body)).body.code, 'invalid_request');
      assert.equal((await st.s.admin('POST', `/admin/v1/merchants/${m.merchantId}/callbacks`, { ...body, chain_id: 999 })).body.code, 'chain_not_supported');
      assert.equal((await st.s.admin('POST', `/admin/v1/merchants/${m.merchantId}/callbacks`, { ...body, callback_contract: `0x${'0'.repeat(40)}` })).status, 400);
      assert.equal((await st.s.admin('POST', `/admin/v1/merchants/nope-merchant/callbacks`, body)).body.code, 'merchant_not_found');
      assert.equal((await st.s.request('GET', `/admin/v1/merchants/${m.merchantId}/callbacks`)).status, 401);
    });

    it('reads the adapter on chain before registering: code, EIP-5267 domain, name and version (400 with a code per cause, nothing written)', async () => {
      const a = st.setup.adapter!;
      const post = (over: Record<string, unknown>) => st.s.admin('POST', `/admin/v1/merchants/${m.merchantId}/callbacks`, { chain_id: st.chain.chainId, callback_contract: a.address, eip712_name: a.eip712Name, eip712_version: a.eip712Version, ...over });
      const noCode = `0x${'ab'.repeat(20)}`;
      const cases: [over: Record<string, unknown>, code: string, param: string, message: RegExp][] = [
        [{ callback_contract: noCode }, 'adapter_no_code', 'callback_contract', new RegExp(`no contract code at ${noCode} on chain ${st.chain.chainId}`)],
        // the settlement contract has code but no eip712Domain()
        [{ callback_contract: st.chain.settlementContract }, 'adapter_domain_missing', 'callback_contract', /no EIP-5267 eip712Domain\(\)/],
        [{ eip712_name: 'Tollgate Example Credits' }, 'adapter_domain_mismatch', 'eip712_name', /eip712_name "Tollgate Example Credits" differs from the adapter's eip712Domain\(\) name "Tollgate Example Credit"/],
        [{ eip712_version: '2' }, 'adapter_domain_mismatch', 'eip712_version', /eip712_version "2" differs from the adapter's eip712Domain\(\) version "1"/],
      ];
      for (const [over, code, param, message] of cases) {
        const r = await post(over);
        assert.equal(r.status, 400, r.text);
        assert.equal(r.body.code, code, r.text);
        assert.equal(r.body.param, param, r.text);
        assert.match(r.body.error, message);
      }
      const list = await st.s.admin('GET', `/admin/v1/merchants/${m.merchantId}/callbacks`);
      assert.equal(list.body.length, 1, 'no refused registration replaced the active one');
      assert.equal(list.body[0].callback_contract, a.address);
      // The same adapter as registered passes (and replaces the registration).
      assert.equal((await post({})).status, 201);
    });

    it('flow follows the token: ERC20_3009 for USDC, ERC20_APPROVE_XFER for USDT; payTo is the settlement contract', async () => {
      const usdc = await create({ token_symbol: 'USDC' });
      assert.equal(usdc.status, 402, usdc.text);
      assert.equal(usdc.body.flow, 'ERC20_3009');
      assert.equal(usdc.body.accepts[0].payTo, st.chain.settlementContract);
      assert.equal(usdc.body.extensions.paymentTerms.receiveType, 'DELEGATE');
      assert.equal(usdc.body.calldata_sign_request, undefined, 'no calldata, no signing request');
      const usdt = await create({ token_symbol: 'USDT' });
      assert.equal(usdt.status, 402, usdt.text);
      assert.equal(usdt.body.flow, 'ERC20_APPROVE_XFER');
      const rec = await st.s.signed(m, 'GET', `/api/v1/orders/${usdt.body.order_id}`);
      assert.equal(rec.body.pay_to_address, st.chain.settlementContract);
      assert.equal(rec.body.flow, 'ERC20_APPROVE_XFER');
    });

    it('callback_calldata adds a calldata_sign_request with the documented domain, struct and fields', async () => {
      const r = await create({ callback_calldata: CALLDATA, amount_wei: '3000000' });
      assert.equal(r.status, 402, r.text);
      const req = r.body.calldata_sign_request;
      const a = st.setup.adapter!;
      assert.deepEqual(req.domain, { name: a.eip712Name, version: a.eip712Version, chainId: st.chain.chainId, verifyingContract: req.domain.verifyingContract });
      assert.equal(req.domain.verifyingContract.toLowerCase(), a.address);
      assert.equal(req.primaryType, 'Eip3009CallbackData');
      assert.deepEqual(
        req.types.Eip3009CallbackData.map((f: { name: string }) => f.name),
        ['token', 'owner', 'payer', 'amount', 'orderId', 'calldataNonce', 'deadline', 'calldataHash'],
      );
      assert.ok(req.types.EIP712Domain);
      assert.equal(req.message.owner.toLowerCase(), st.chain.settlementContract);
      assert.equal(req.message.payer.toLowerCase(), payer().address.toLowerCase());
      assert.equal(req.message.amount, '3000000');
      assert.equal(req.message.orderId, orderIdToBytes32(r.body.order_id));
      assert.equal(req.message.calldataHash, keccak256(CALLDATA));
      assert.equal(typeof req.message.deadline, 'string');
      assert.ok(Number(req.message.deadline) > r.body.extensions.paymentTerms.expiresAt);
      assert.equal(r.body.extensions.paymentTerms.signatureEndpoint, `${st.s.tg.deps.config.publicBaseUrl}/api/v1/orders/${r.body.order_id}/calldata-signature`);
    });

    it('callback_calldata is refused for a merchant without a registration on the chain, and for DIRECT merchants', async () => {
      const bare = await setupDelegateMerchant(st, { callback: false });
      const r = await st.s.signed(bare, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: st.chain.chainId, from_address: payer().address, callback_calldata: CALLDATA }) });
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 'callback_not_registered');
      // without calldata the same merchant's order is a plain DELEGATE order
      const plain = await st.s.signed(bare, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: st.chain.chainId, from_address: payer().address }) });
      assert.equal(plain.status, 402, plain.text);
      const big = await create({ callback_calldata: `0x${'ab'.repeat(8193)}` });
      assert.equal(big.status, 400);
    });

    it('accepts the payer signature once; refuses wrong signer, tampered calldata, another order, a second signature', async () => {
      const r = await create({ callback_calldata: CALLDATA });
      const orderId = r.body.order_id as string;
      const req = r.body.calldata_sign_request;
      const path = `/api/v1/orders/${orderId}/calldata-signature`;
      const submit = (signature: string) => st.s.signed(m, 'POST', path, { body: { signature } });

      const wrong = await privateKeyToAccount(st.dev.payers[1]!.privateKey).signTypedData(toSignableTypedData(req));
      const w = await submit(wrong);
      assert.equal(w.status, 400);
      assert.equal(w.body.code, 'invalid_calldata_signature');

      const tampered = { ...req, message: { ...req.message, calldataHash: keccak256('0xdead') } };
      const t = await submit(await privateKeyToAccount(payer().privateKey).signTypedData(toSignableTypedData(tampered)));
      assert.equal(t.body.code, 'invalid_calldata_signature');

      const other = await create({ callback_calldata: CALLDATA });
      const otherSig = await privateKeyToAccount(payer().privateKey).signTypedData(toSignableTypedData(other.body.calldata_sign_request));
      assert.equal((await submit(otherSig)).body.code, 'invalid_calldata_signature', "another order's signature is not this order's");

      const good = await privateKeyToAccount(payer().privateKey).signTypedData(toSignableTypedData(req));
      const ok = await submit(good);
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.body, { status: 'ok', order_id: orderId });
      assert.equal((await submit(good)).status, 200, 'the same signature again is an idempotent retry');
      const second = await privateKeyToAccount(payer().privateKey).signTypedData(toSignableTypedData({ ...req, message: { ...req.message } }));
      assert.equal(second, good, 'ECDSA in viem is deterministic (RFC 6979)');
      // a different valid-looking signature (high-s twin) is refused: the first one stands
      const s = BigInt(`0x${good.slice(66, 130)}`);
      const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
      const v = parseInt(good.slice(130), 16);
      const twin = `${good.slice(0, 66)}${(n - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
      assert.equal((await submit(twin)).body.code, 'invalid_calldata_signature', 'high-s signatures are refused (the contract refuses them too)');

      const plain = await create({});
      const np = await st.s.signed(m, 'POST', `/api/v1/orders/${plain.body.order_id}/calldata-signature`, { body: { signature: good } });
      assert.equal(np.status, 400);
      assert.equal(np.body.code, 'invalid_request');
      const missing = await st.s.signed(m, 'POST', `/api/v1/orders/ord_missing/calldata-signature`, { body: { signature: good } });
      assert.equal(missing.status, 404);
    });

    it('refuses a signature past the deadline', async () => {
      const r = await create({ callback_calldata: CALLDATA });
      const sig = await privateKeyToAccount(payer().privateKey).signTypedData(toSignableTypedData(r.body.calldata_sign_request));
      const deadline = Number(r.body.calldata_sign_request.message.deadline);
      const saved = st.s.clock.ms;
      st.s.clock.ms = (deadline + 1) * 1000;
      try {
        const x = await st.s.signed(m, 'POST', `/api/v1/orders/${r.body.order_id}/calldata-signature`, { body: { signature: sig } });
        assert.equal(x.status, 400, x.text);
        assert.equal(x.body.code, 'calldata_signature_expired');
      } finally {
        st.s.clock.ms = saved;
      }
    });

    it('tollgate merchant callback / callbacks', async () => {
      const run = async (...args: string[]) => {
        const p = spawnTollgate(args, { TOLLGATE_URL: st.s.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN });
        const code = p.child.exitCode ?? (await new Promise<number | null>((res) => p.child.once('exit', res)));
        return { code, out: p.output() };
      };
      const other = await setupDelegateMerchant(st, { callback: false });
      const reg = await run('merchant', 'callback', other.merchantId, '--chain', String(st.chain.chainId), '--contract', st.setup.adapter!.address, '--eip712-name', 'Tollgate Example Credit', '--eip712-version', '1', '--json');
      assert.equal(reg.code, 0, reg.out);
      assert.equal(JSON.parse(reg.out).callback_contract, st.setup.adapter!.address);
      const list = await run('merchant', 'callbacks', other.merchantId);
      assert.equal(list.code, 0, list.out);
      assert.match(list.out, new RegExp(`callback_contract: ${st.setup.adapter!.address}`));
      const bad = await run('merchant', 'callback', other.merchantId);
      assert.equal(bad.code, 1);
      assert.match(bad.out, /missing --chain/);
    });
  });
}
