// Request shaping: camelCase parameters → the exact bytes on the wire, for every method, recorded
// by a local HTTP server. The checkout and calldata-signature routes do not exist on the server
// yet; their real-server tests come with those issues.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { after, before, beforeEach, describe, it } from 'node:test';
import { SDK_VERSION, TollgateClient } from '../src/index.ts';
import { canonicalOf, hmacHex } from './helpers/canonical.ts';
import { sendJson, startRecorder, type Recorded, type Recorder } from './helpers/recorder.ts';

const SECRET = 'sec_shaping_test_0123456789';
const PAYER = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const SIG = `0x${'1b'.repeat(65)}`;
const CHECKOUT = { checkout_id: 'cs_9f8e7d', checkout_type: 'DIRECT', url: 'https://pay.example/checkout/cs_9f8e7d', expires_at: 1_900_000_000 };
const TERMS = {
  x402Version: 2,
  resource: { url: 'u', description: 'd', mimeType: 'application/json' },
  accepts: [{ scheme: 'exact', network: 'eip155:31337', amount: '5', asset: '0xa', payTo: '0xb', maxTimeoutSeconds: 1, extra: { flow: 'ERC20_3009', tokenSymbol: 'USDC', decimals: 6 } }],
  extensions: { paymentTerms: { destinationChain: 'eip155:2345', expiresAt: 1_900_000_000, paymentMethod: 'transfer', receiveType: 'DELEGATE' } },
  order_id: 'ord_1',
  flow: 'ERC20_3009',
  token_symbol: 'USDC',
  calldata_sign_request: { domain: { name: 'Shop', version: '1', chainId: 2345, verifyingContract: '0xc' }, types: {}, primaryType: 'PaymentCallback', message: {} },
};

describe('request shaping', () => {
  let rec: Recorder;
  let client: TollgateClient;
  const last = (): Recorded => rec.requests.at(-1)!;
  const assertSigned = (r: Recorded) => assert.equal(r.headers['x-sign'], hmacHex(SECRET, canonicalOf(r.body, r.headers)));

  before(async () => {
    rec = await startRecorder((req, res) => {
      if (req.url!.endsWith('/api/v1/orders')) return sendJson(res, 402, TERMS);
      if (req.url!.endsWith('/checkout/sessions')) return sendJson(res, 200, CHECKOUT);
      if (req.url!.endsWith('/calldata-signature')) return sendJson(res, 200, { status: 'ok', order_id: 'ord_1' });
      if (req.url!.startsWith('/merchants/')) return sendJson(res, 200, { merchant_id: 'mch_1', name: 'M', receive_type: 'DIRECT', payment_methods: ['crypto'], wallets: [] });
      sendJson(res, 200, { order_id: 'ord_1', status: 'CANCELLED' });
    });
    client = new TollgateClient({ baseUrl: `${rec.url}/`, apiKey: 'key_shape', apiSecret: SECRET });
  });
  beforeEach(() => rec.requests.splice(0));
  after(() => rec.close());

  it('createOrder, required fields only: exact bytes; undefined and null optionals are omitted', async () => {
    const order = await client.createOrder({
      dappOrderId: 'A-1',
      chainId: 31337,
      tokenSymbol: 'USDC',
      fromAddress: PAYER,
      amountWei: 1_000_000n,
      tokenContract: undefined,
      callbackCalldata: null as unknown as undefined,
    });
    const r = last();
    assert.equal(r.method, 'POST');
    assert.equal(r.url, '/api/v1/orders');
    assert.equal(r.body, `{"dapp_order_id":"A-1","chain_id":31337,"token_symbol":"USDC","from_address":"${PAYER}","amount_wei":"1000000"}`);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.headers['user-agent'], `tollgate-sdk-node/${SDK_VERSION}`);
    assert.equal(r.headers['idempotency-key'], undefined, 'no idempotency key (the merchant API takes none)');
    assertSigned(r);
    assert.equal(order.payToChainId, 2345);
    assert.equal(order.fromChainId, 31337);
    assert.deepEqual(order.calldataSignRequest, TERMS.calldata_sign_request);
  });

  it('createOrder, every field: wire names in the documented order, a uint256 bigint as its digits', async () => {
    const max = 2n ** 256n - 1n;
    await client.createOrder({
      dappOrderId: 'A-2',
      chainId: 2345,
      tokenSymbol: 'USDT',
      tokenContract: '0xE7f1725E7734CE288F8367e1Bb143E90bb3F0512',
      fromAddress: PAYER,
      amountWei: max,
      callbackCalldata: '0xdeadbeef',
      merchantId: 'mch_1',
    });
    assert.equal(last().body, `{"dapp_order_id":"A-2","chain_id":2345,"token_symbol":"USDT","token_contract":"0xE7f1725E7734CE288F8367e1Bb143E90bb3F0512","from_address":"${PAYER}","amount_wei":"${max}","callback_calldata":"0xdeadbeef","merchant_id":"mch_1"}`);
    assertSigned(last());
  });

  it('wrong parameter types throw TypeError before anything is sent', async () => {
    const base = { dappOrderId: 'A-3', chainId: 1, tokenSymbol: 'USDC', fromAddress: PAYER, amountWei: '1' };
    const bad: [string, () => Promise<unknown>, RegExp][] = [
      ['chainId as string', () => client.createOrder({ ...base, chainId: '2345' as unknown as number }), /chainId must be a positive integer/],
      ['chainId fractional', () => client.createOrder({ ...base, chainId: 1.5 }), /chainId/],
      ['amountWei as number', () => client.createOrder({ ...base, amountWei: 1_000_000 as unknown as string }), /amountWei must be an integer string or a bigint/],
      ['amountWei decimal', () => client.createOrder({ ...base, amountWei: '1.5' }), /amountWei/],
      ['dappOrderId empty', () => client.createOrder({ ...base, dappOrderId: '' }), /dappOrderId/],
      ['price as number', () => client.createCheckoutSession({ price: 9.99 as unknown as string }), /price must be a decimal string/],
      ['lineItems pre-serialized', () => client.createCheckoutSession({ price: '1', lineItems: '[]' as unknown as [] }), /lineItems must be an array \(the SDK serializes it once\)/],
      ['publicMetadata array', () => client.createCheckoutSession({ price: '1', publicMetadata: [] as unknown as Record<string, unknown> }), /publicMetadata must be a plain object/],
      ['paymentRails string', () => client.createCheckoutSession({ price: '1', paymentRails: 'crypto,fiat' as unknown as [] }), /paymentRails/],
      ['expiresIn fractional', () => client.createCheckoutSession({ price: '1', expiresIn: 1.5 }), /expiresIn/],
      ['short signature', () => client.submitCalldataSignature('ord_1', '0x1234'), /signature must be a 65-byte/],
      ['empty order id', () => client.getOrderStatus(''), /orderId/],
    ];
    for (const [name, call, msg] of bad) {
      await assert.rejects(call, (err: unknown) => err instanceof TypeError && msg.test(err.message), name);
    }
    assert.equal(rec.requests.length, 0);
  });

  it('createCheckoutSession, crypto only: defaults checkout_type, omits every absent field, returns the 200 body', async () => {
    const session = await client.createCheckoutSession({ price: '9.99' });
    const r = last();
    assert.equal(r.url, '/api/v1/checkout/sessions');
    assert.equal(r.body, '{"checkout_type":"DIRECT","price":"9.99"}');
    assertSigned(r);
    assert.deepEqual(session, CHECKOUT);
  });

  it('createCheckoutSession, card only: payment_rails "fiat", no price, fiat fields as strings', async () => {
    await client.createCheckoutSession({ paymentRails: ['fiat'], fiatCurrency: 'USD', fiatAmount: '12.00', expiresIn: 900, clientReferenceId: 'ref-1' });
    assert.equal(last().body, '{"checkout_type":"DIRECT","payment_rails":"fiat","fiat_currency":"USD","fiat_amount":"12.00","client_reference_id":"ref-1","expires_in":900}');
    assertSigned(last());
  });

  it('submitCalldataSignature: POST {signature} to the order, returns {status, order_id}', async () => {
    const out = await client.submitCalldataSignature('ord_1', SIG);
    const r = last();
    assert.equal(r.method, 'POST');
    assert.equal(r.url, '/api/v1/orders/ord_1/calldata-signature');
    assert.equal(r.body, `{"signature":"${SIG}"}`);
    assertSigned(r);
    assert.equal(r.headers['x-sign'], hmacHex(SECRET, `api_key=key_shape&nonce=${r.headers['x-nonce']}&signature=${SIG}&timestamp=${r.headers['x-timestamp']}`));
    assert.deepEqual(out, { status: 'ok', order_id: 'ord_1' });
  });

  it('cancelOrder sends {} as JSON; ids are path-encoded', async () => {
    await client.cancelOrder('ord_1');
    assert.equal(last().url, '/api/v1/orders/ord_1/cancel');
    assert.equal(last().body, '{}');
    assert.equal(last().headers['content-type'], 'application/json');
    assertSigned(last());
    await client.getOrderStatus('a/b?c=1#d');
    assert.equal(last().url, '/api/v1/orders/a%2Fb%3Fc%3D1%23d');
  });

  it('getMerchant(id) is a public read: no credentials are sent', async () => {
    await client.getMerchant('mch_1');
    const r = last();
    assert.equal(r.url, '/merchants/mch_1');
    for (const h of ['x-api-key', 'x-sign', 'x-nonce', 'x-timestamp']) assert.equal(r.headers[h], undefined, h);
  });

  it('a base URL with a path prefix is kept', async () => {
    const prefixed = new TollgateClient({ baseUrl: `${rec.url}/tollgate///`, apiKey: 'k', apiSecret: SECRET });
    await prefixed.getOrderStatus('ord_1');
    assert.equal(last().url, '/tollgate/api/v1/orders/ord_1');
  });

  it('the API secret is not visible on the client object', () => {
    assert.equal(inspect(client, { depth: 10, showHidden: true }).includes(SECRET), false);
    assert.equal(JSON.stringify(client).includes(SECRET), false);
    assert.throws(() => new TollgateClient({ baseUrl: 'ftp://x', apiKey: 'k', apiSecret: 's' }), TypeError);
    assert.throws(() => new TollgateClient({ baseUrl: 'http://x', apiKey: 'k', apiSecret: '' }), TypeError);
    assert.throws(() => new TollgateClient({ baseUrl: 'http://x', apiKey: 'k', apiSecret: 's', maxAttempts: 0 }), TypeError);
  });
});
