// Signing: the SDK agrees with the published vectors, and an independent implementation agrees with
// the headers the SDK actually sent for real requests (captured by a local recorder server).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { TollgateClient } from '../src/index.ts';
import { signAttempt } from '../src/transport.ts';
import { canonicalOf, hmacHex } from './helpers/canonical.ts';
import { sendJson, startRecorder, type Recorder } from './helpers/recorder.ts';

interface Vector {
  name: string;
  api_secret: string;
  query: Record<string, string>;
  body: Record<string, unknown>;
  api_key: string;
  timestamp: string;
  nonce: string;
  canonical: string;
  sign: string;
}
const file = JSON.parse(readFileSync(new URL('../../protocol/test-vectors/signing.json', import.meta.url), 'utf8')) as {
  version: number;
  algorithm: string;
  vectors: Vector[];
};

describe('signing vectors (packages/protocol/test-vectors/signing.json)', () => {
  it('the file has the documented envelope', () => {
    assert.equal(file.version, 1);
    assert.equal(file.algorithm, 'tollgate-merchant-hmac-sha256');
    assert.ok(file.vectors.length >= 16);
  });

  for (const v of file.vectors) {
    it(`SDK signs vector ${v.name}`, () => {
      // The vector body is the JSON as transmitted: go through the bytes, as a request does.
      const body = Object.keys(v.body).length ? (JSON.parse(JSON.stringify(v.body)) as Record<string, unknown>) : undefined;
      const h = signAttempt(v.api_key, v.api_secret, body, {
        now: () => Number(v.timestamp) * 1000,
        nonce: () => v.nonce,
        ...(Object.keys(v.query).length ? { query: v.query } : {}),
      });
      assert.deepEqual(h, { 'X-API-Key': v.api_key, 'X-Timestamp': v.timestamp, 'X-Nonce': v.nonce, 'X-Sign': v.sign });
    });
  }

  it('the independent implementation reproduces every vector', () => {
    for (const v of file.vectors) {
      const headers = { 'x-api-key': v.api_key, 'x-timestamp': v.timestamp, 'x-nonce': v.nonce };
      const canonical = canonicalOf(Object.keys(v.body).length ? JSON.stringify(v.body) : '', headers, v.query);
      assert.equal(canonical, v.canonical, v.name);
      assert.equal(hmacHex(v.api_secret, canonical), v.sign, v.name);
    }
  });
});

describe('signatures of requests the SDK actually sends', () => {
  const SECRET = 'sec_sdk_signing_test_0123456789';
  const KEY = 'key_sdk_signing_test';
  let rec: Recorder;
  let client: TollgateClient;
  before(async () => {
    rec = await startRecorder((req, res) => {
      if (req.url === '/api/v1/orders') return sendJson(res, 402, terms);
      sendJson(res, 200, { checkout_id: 'cs_abc', checkout_type: 'DIRECT', url: 'https://pay.example/c/cs_abc', expires_at: 1_900_000_000 });
    });
    client = new TollgateClient({ baseUrl: rec.url, apiKey: KEY, apiSecret: SECRET });
  });
  after(() => rec.close());

  const terms = {
    x402Version: 2,
    resource: { url: 'http://x/api/v1/orders/ord_1', description: 'd', mimeType: 'application/json' },
    accepts: [
      {
        scheme: 'exact',
        network: 'eip155:2345',
        amount: '1000000',
        asset: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
        payTo: '0xa0ee7a142d267c1f36714e4a8f75612f20a79720',
        maxTimeoutSeconds: 600,
        extra: { flow: 'ERC20_DIRECT', tokenSymbol: 'USDC', decimals: 6 },
      },
    ],
    extensions: { paymentTerms: { destinationChain: 'eip155:2345', expiresAt: 1_900_000_000, paymentMethod: 'transfer', receiveType: 'DIRECT' } },
    order_id: 'ord_1',
    flow: 'ERC20_DIRECT',
    token_symbol: 'USDC',
  };

  it('createOrder: the canonical string typed by hand matches the bytes, and the HMAC matches X-Sign', async () => {
    await client.createOrder({ dappOrderId: 'shop-1001', chainId: 2345, tokenSymbol: 'USDC', fromAddress: '0x8ba1f109551bd432803012645ac136ddd64dba72', amountWei: 1_000_000n });
    const r = rec.requests.at(-1)!;
    assert.equal(r.body, '{"dapp_order_id":"shop-1001","chain_id":2345,"token_symbol":"USDC","from_address":"0x8ba1f109551bd432803012645ac136ddd64dba72","amount_wei":"1000000"}');
    const ts = r.headers['x-timestamp'] as string;
    const nonce = r.headers['x-nonce'] as string;
    const byHand = `amount_wei=1000000&api_key=${KEY}&chain_id=2345&dapp_order_id=shop-1001&from_address=0x8ba1f109551bd432803012645ac136ddd64dba72&nonce=${nonce}&timestamp=${ts}&token_symbol=USDC`;
    assert.equal(canonicalOf(r.body, r.headers), byHand);
    assert.equal(r.headers['x-sign'], hmacHex(SECRET, byHand));
    assert.match(ts, /^[0-9]{10}$/, 'seconds, not milliseconds');
    assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 5);
  });

  it('createCheckoutSession with lineItems and metadata: *_json strings signed exactly as transmitted', async () => {
    const lineItems = [
      { name: 'T-shirt & "socks"', quantity: 2, amount: '9.99' },
      { name: 'Mug=1', quantity: 1, amount: '5.00' },
    ];
    const publicMetadata = { sku: 'TS-1', tags: ['a', 'b'], note: 'ünïcode ✓' };
    const privateMetadata = { customer: 'cus_42', nested: { tier: 3 } };
    await client.createCheckoutSession({
      paymentRails: ['crypto', 'fiat'],
      price: '24.98',
      fiatCurrency: 'EUR',
      fiatAmount: '23.50',
      clientReferenceId: 'cart-77',
      expiresIn: 1800,
      lineItems,
      publicMetadata,
      privateMetadata,
      successUrl: 'https://shop.example/ok?x=1&y=2',
      cancelUrl: 'https://shop.example/cancel',
    });
    const r = rec.requests.at(-1)!;
    const li = JSON.stringify(lineItems);
    const pub = JSON.stringify(publicMetadata);
    const priv = JSON.stringify(privateMetadata);
    assert.equal(
      r.body,
      JSON.stringify({
        checkout_type: 'DIRECT',
        payment_rails: 'crypto,fiat',
        price: '24.98',
        fiat_currency: 'EUR',
        fiat_amount: '23.50',
        client_reference_id: 'cart-77',
        expires_in: 1800,
        line_items_json: li,
        public_metadata_json: pub,
        private_metadata_json: priv,
        success_url: 'https://shop.example/ok?x=1&y=2',
        cancel_url: 'https://shop.example/cancel',
      }),
    );
    const ts = r.headers['x-timestamp'] as string;
    const nonce = r.headers['x-nonce'] as string;
    const byHand = [
      `api_key=${KEY}`,
      'cancel_url=https://shop.example/cancel',
      'checkout_type=DIRECT',
      'client_reference_id=cart-77',
      'expires_in=1800',
      'fiat_amount=23.50',
      'fiat_currency=EUR',
      `line_items_json=${li}`,
      `nonce=${nonce}`,
      'payment_rails=crypto,fiat',
      'price=24.98',
      `private_metadata_json=${priv}`,
      `public_metadata_json=${pub}`,
      'success_url=https://shop.example/ok?x=1&y=2',
      `timestamp=${ts}`,
    ].join('&');
    assert.equal(canonicalOf(r.body, r.headers), byHand);
    assert.equal(r.headers['x-sign'], hmacHex(SECRET, byHand));
    // serialized once: the field holds the array's JSON, not a JSON string of it
    assert.deepEqual(JSON.parse(JSON.parse(r.body).line_items_json), lineItems);
  });

  it('a GET signs only api_key, nonce and timestamp (no path, no body)', async () => {
    const r0 = await startRecorder((_q, res) => sendJson(res, 200, { order_id: 'ord_1', status: 'CHECKOUT_VERIFIED' }));
    try {
      await new TollgateClient({ baseUrl: r0.url, apiKey: KEY, apiSecret: SECRET }).getOrderStatus('ord_1');
      const r = r0.requests[0]!;
      assert.equal(r.body, '');
      assert.equal(r.headers['content-type'], undefined);
      const byHand = `api_key=${KEY}&nonce=${r.headers['x-nonce']}&timestamp=${r.headers['x-timestamp']}`;
      assert.equal(r.headers['x-sign'], hmacHex(SECRET, byHand));
    } finally {
      await r0.close();
    }
  });
});
