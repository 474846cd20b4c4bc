// Retries, timeouts and unknown outcomes against local scripted servers (node:http on 127.0.0.1:0).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, it } from 'node:test';
import { TollgateApiError, TollgateClient, TollgateError, TollgateNetworkError, TollgateResponseError, TollgateTimeoutError, TollgateUnknownOutcomeError, type TollgateClientOptions } from '../src/index.ts';
import { canonicalOf, hmacHex } from './helpers/canonical.ts';
import { sendJson, startRecorder, type Handler, type Recorder } from './helpers/recorder.ts';

const SECRET = 'sec_transport_test_0123456789';
const RECORD = { order_id: 'ord_1', status: 'CHECKOUT_VERIFIED' };
const ORDER = { dappOrderId: 'shop-9', chainId: 31337, tokenSymbol: 'USDC', fromAddress: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', amountWei: '1000000' };
const envelope = (code: string, error = code) => ({ error, code, request_id: 'req_test' });

let servers: Recorder[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function setup(handler: Handler, opts: Partial<TollgateClientOptions> = {}) {
  const rec = await startRecorder(handler);
  servers.push(rec);
  const client = new TollgateClient({ baseUrl: rec.url, apiKey: 'key_t', apiSecret: SECRET, retryBaseDelayMs: 10, retryMaxDelayMs: 50, ...opts });
  return { rec, client };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

/** Waits a little so that a retry, if the SDK wrongly made one, would have arrived. */
const settle = () => delay(300);

describe('reads are retried', () => {
  it('429 with Retry-After: 1, then 200: two attempts about one second apart, fresh nonce', async () => {
    const { rec, client } = await setup((_r, res, n) => (n === 1 ? sendJson(res, 429, envelope('rate_limited'), { 'retry-after': '1' }) : sendJson(res, 200, RECORD)));
    const t0 = Date.now();
    const o = await client.getOrderStatus('ord_1');
    const elapsed = Date.now() - t0;
    assert.equal(o.status, 'CHECKOUT_VERIFIED');
    assert.equal(rec.requests.length, 2);
    assert.ok(elapsed >= 950 && elapsed < 3000, `elapsed ${elapsed} ms`);
    assert.ok(rec.requests[1]!.at - rec.requests[0]!.at >= 950);
    assert.notEqual(rec.requests[0]!.headers['x-nonce'], rec.requests[1]!.headers['x-nonce']);
  });

  it('503 twice, then 200: three attempts, each with a fresh nonce and a valid signature', async () => {
    const { rec, client } = await setup((_r, res, n) => (n < 3 ? sendJson(res, 503, envelope('service_unavailable')) : sendJson(res, 200, { payload: {}, signature: '0x00' })));
    const proof = await client.getOrderProof('ord_1');
    assert.equal(proof.signature, '0x00');
    assert.equal(rec.requests.length, 3);
    const nonces = rec.requests.map((r) => r.headers['x-nonce']);
    assert.equal(new Set(nonces).size, 3, `nonces ${nonces.join(', ')}`);
    for (const r of rec.requests) {
      assert.equal(r.url, '/api/v1/orders/ord_1/proof');
      assert.equal(r.headers['x-sign'], hmacHex(SECRET, canonicalOf(r.body, r.headers)));
    }
  });

  it('gives up after maxAttempts with the last typed error', async () => {
    const { rec, client } = await setup((_r, res) => sendJson(res, 503, envelope('service_unavailable', 'down')), { maxAttempts: 4 });
    const err = await rejection(client.getMerchant());
    assert.ok(err instanceof TollgateApiError);
    assert.equal(err.status, 503);
    assert.equal(err.code, 'service_unavailable');
    assert.equal(err.requestId, 'req_test');
    assert.equal(rec.requests.length, 4);
  });

  it('retries a connection lost mid-request, then succeeds', async () => {
    const { rec, client } = await setup((_r, res, n) => (n === 1 ? res.socket!.destroy() : sendJson(res, 200, RECORD)));
    assert.equal((await client.getOrderStatus('ord_1')).order_id, 'ord_1');
    assert.equal(rec.requests.length, 2);
  });

  it('does not retry a 4xx, nor a Retry-After longer than 60 s (it is reported instead)', async () => {
    const a = await setup((_r, res) => sendJson(res, 404, envelope('order_not_found', 'order not found')));
    const e1 = await rejection(a.client.getOrderStatus('ord_x'));
    assert.ok(e1 instanceof TollgateApiError && e1.code === 'order_not_found' && e1.status === 404);
    assert.equal(a.rec.requests.length, 1);

    const b = await setup((_r, res) => sendJson(res, 429, envelope('rate_limited'), { 'retry-after': '120' }));
    const e2 = await rejection(b.client.getOrderStatus('ord_x'));
    assert.ok(e2 instanceof TollgateApiError);
    assert.equal(e2.retryAfterMs, 120_000);
    assert.equal(b.rec.requests.length, 1);
  });

  it('a read timing out on every attempt ends in TollgateTimeoutError', async () => {
    const { rec, client } = await setup(() => {}, { timeoutMs: 150, maxAttempts: 2 });
    const err = await rejection(client.getOrderStatus('ord_1'));
    assert.ok(err instanceof TollgateTimeoutError);
    assert.equal(err.timeoutMs, 150);
    assert.equal(rec.requests.length, 2);
  });

  it('an error page without the envelope gets code http_<status>; a redirect is not followed', async () => {
    const a = await setup(
      (_r, res) => {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html>Bad Gateway</html>');
      },
      { maxAttempts: 1 },
    );
    const e1 = await rejection(a.client.getOrderStatus('ord_1'));
    assert.ok(e1 instanceof TollgateApiError);
    assert.equal(e1.code, 'http_502');
    assert.match(e1.message, /Bad Gateway/);

    const b = await setup((_r, res) => {
      res.writeHead(307, { location: 'https://elsewhere.example/api/v1/orders/ord_1' });
      res.end();
    });
    const e2 = await rejection(b.client.getOrderStatus('ord_1'));
    assert.ok(e2 instanceof TollgateApiError && e2.code === 'http_307');
    assert.equal(b.rec.requests.length, 1);
  });

  it('an aborted read rejects with the signal reason and stops retrying', async () => {
    const { rec, client } = await setup(() => {});
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('user went away')), 100);
    const err = await rejection(client.getOrderStatus('ord_1', { signal: ac.signal }));
    assert.equal((err as Error).message, 'user went away');
    await settle();
    assert.equal(rec.requests.length, 1);
  });
});

describe('writes are never retried', () => {
  it('createOrder: socket destroyed after the request was read → TollgateUnknownOutcomeError, exactly one request', async () => {
    const { rec, client } = await setup((_r, res) => res.socket!.destroy());
    const err = await rejection(client.createOrder(ORDER));
    assert.ok(err instanceof TollgateUnknownOutcomeError, String(err));
    assert.ok(err instanceof TollgateError);
    assert.ok(!(err instanceof TollgateNetworkError), 'an unknown outcome must never look like a safe-to-retry network error');
    assert.equal(err.code, 'unknown_outcome');
    assert.equal(err.dappOrderId, 'shop-9');
    assert.equal(err.method, 'POST');
    assert.equal(err.path, '/api/v1/orders');
    assert.equal(err.rawRequestBody, rec.requests[0]!.body);
    assert.deepEqual(err.requestBody, JSON.parse(rec.requests[0]!.body));
    assert.ok(err.cause instanceof TollgateNetworkError);
    assert.match(err.message, /shop-9/);
    await settle();
    assert.equal(rec.requests.length, 1, 'no retry of a create ever reaches the server');
  });

  it('createOrder: no answer within timeoutMs → unknown outcome caused by a timeout, one request', async () => {
    const { rec, client } = await setup(() => {}, { timeoutMs: 200 });
    const t0 = Date.now();
    const err = await rejection(client.createOrder(ORDER));
    assert.ok(Date.now() - t0 < 2000);
    assert.ok(err instanceof TollgateUnknownOutcomeError);
    assert.ok(err.cause instanceof TollgateTimeoutError);
    assert.equal(
      err.walk((e) => e instanceof TollgateTimeoutError),
      err.cause,
    );
    assert.equal(err.dappOrderId, 'shop-9');
    await settle();
    assert.equal(rec.requests.length, 1);
  });

  it('createCheckoutSession, cancelOrder, submitCalldataSignature: unknown outcomes carry their reference', async () => {
    const { rec, client } = await setup((_r, res) => res.socket!.destroy());
    const e1 = await rejection(client.createCheckoutSession({ price: '1.00', clientReferenceId: 'cart-1' }));
    assert.ok(e1 instanceof TollgateUnknownOutcomeError);
    assert.equal(e1.clientReferenceId, 'cart-1');
    assert.equal(e1.path, '/api/v1/checkout/sessions');
    const e2 = await rejection(client.cancelOrder('ord_7'));
    assert.ok(e2 instanceof TollgateUnknownOutcomeError && e2.orderId === 'ord_7' && e2.rawRequestBody === '{}');
    const e3 = await rejection(client.submitCalldataSignature('ord_8', `0x${'ab'.repeat(65)}`));
    assert.ok(e3 instanceof TollgateUnknownOutcomeError && e3.orderId === 'ord_8' && e3.path === '/api/v1/orders/ord_8/calldata-signature');
    await settle();
    assert.equal(rec.requests.length, 3);
  });

  it('a 5xx answer to a create is an unknown outcome; a 4xx is a plain API error; neither is repeated', async () => {
    const { rec, client } = await setup((_r, res, n) => (n === 1 ? sendJson(res, 503, envelope('service_unavailable'), { 'retry-after': '1' }) : sendJson(res, 429, envelope('rate_limited'), { 'retry-after': '2' })));
    const e1 = await rejection(client.createOrder(ORDER));
    assert.ok(e1 instanceof TollgateUnknownOutcomeError);
    assert.equal(e1.status, 503);
    assert.ok(e1.cause instanceof TollgateApiError && e1.cause.code === 'service_unavailable');
    const e2 = await rejection(client.createOrder(ORDER));
    assert.ok(e2 instanceof TollgateApiError && !(e2 instanceof TollgateUnknownOutcomeError));
    assert.equal(e2.code, 'rate_limited');
    assert.equal(e2.retryAfterMs, 2000);
    await settle();
    assert.equal(rec.requests.length, 2);
  });

  it('a success status other than 402, or an unreadable 402, is an unknown outcome', async () => {
    const { client } = await setup((_r, res, n) => (n === 1 ? sendJson(res, 200, { ok: true }) : sendJson(res, 402, '{"x402Version":2,')));
    const e1 = await rejection(client.createOrder(ORDER));
    assert.ok(e1 instanceof TollgateUnknownOutcomeError && e1.status === 200);
    const e2 = await rejection(client.createOrder(ORDER));
    assert.ok(e2 instanceof TollgateUnknownOutcomeError && e2.cause instanceof TollgateResponseError);
  });

  it('connection refused: the request never left, so it is a TollgateNetworkError, not an unknown outcome', async () => {
    const srv = http.createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const { port } = srv.address() as AddressInfo;
    await new Promise<void>((r) => srv.close(() => r()));
    const client = new TollgateClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k', apiSecret: SECRET });
    const err = await rejection(client.createOrder(ORDER));
    assert.ok(err instanceof TollgateNetworkError, String(err));
    assert.ok(!(err instanceof TollgateUnknownOutcomeError));
    assert.equal(err.code, 'network_error');
  });

  it('a create with an already-aborted signal sends nothing', async () => {
    const { rec, client } = await setup((_r, res) => sendJson(res, 402, {}));
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    const err = await rejection(client.createOrder(ORDER, { signal: ac.signal }));
    assert.equal((err as Error).message, 'stop');
    assert.equal(rec.requests.length, 0);
  });
});
