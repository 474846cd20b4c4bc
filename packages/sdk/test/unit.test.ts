// Pure pieces: 402 normalization, Retry-After and backoff, error classes, and waitForOrder's
// handling of transient failures (against a scripted local server).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isTerminalOrderStatus, TollgateApiError, TollgateClient, TollgateError, TollgateNetworkError, TollgateResponseError, TollgateTimeoutError, TollgateUnknownOutcomeError } from '../src/index.ts';
import { backoffDelay, parseRetryAfter } from '../src/transport.ts';
import { normalizeCreatedOrder } from '../src/wire.ts';
import { sendJson, startRecorder } from './helpers/recorder.ts';

const TERMS = {
  x402Version: 2,
  resource: { url: 'u', description: 'd', mimeType: 'application/json' },
  accepts: [{ scheme: 'exact', network: 'eip155:137', amount: '42', asset: '0xa', payTo: '0xb', maxTimeoutSeconds: 9, extra: { flow: 'ERC20_DIRECT', tokenSymbol: 'USDT', decimals: 6 } }],
  extensions: { paymentTerms: { destinationChain: 'eip155:2345', expiresAt: 1_800_000_000, paymentMethod: 'transfer', receiveType: 'DIRECT' } },
  order_id: 'ord_x',
  flow: 'ERC20_DIRECT',
  token_symbol: 'USDT',
};

describe('normalizeCreatedOrder', () => {
  it('maps the x402 body onto the normalized fields (docs/orders.md) and keeps the raw body', () => {
    const o = normalizeCreatedOrder(TERMS);
    assert.deepEqual(
      { ...o, x402: undefined },
      { orderId: 'ord_x', flow: 'ERC20_DIRECT', tokenSymbol: 'USDT', tokenContract: '0xa', payToAddress: '0xb', network: 'eip155:137', fromChainId: 137, payToChainId: 2345, amountWei: '42', decimals: 6, expiresAt: 1_800_000_000, x402: undefined },
    );
    assert.equal(o.x402, TERMS);
  });

  it('takes a Solana order: the chain id is the requested one, the Solana Pay URL is kept', () => {
    const network = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
    const paymentUrl = 'solana:9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin?amount=1.5&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
    const body = { ...TERMS, flow: 'SOL_DIRECT', accepts: [{ ...TERMS.accepts[0], network }], extensions: { paymentTerms: { ...TERMS.extensions.paymentTerms, destinationChain: network, paymentUrl } } };
    const o = normalizeCreatedOrder(body, 101);
    assert.deepEqual([o.flow, o.network, o.fromChainId, o.payToChainId, o.paymentUrl], ['SOL_DIRECT', network, 101, 101, paymentUrl]);
  });

  it('names the first missing piece of a malformed body', () => {
    const cases: [unknown, RegExp][] = [
      ['text', /not a JSON object/],
      [{ ...TERMS, order_id: undefined }, /order_id/],
      [{ ...TERMS, accepts: [] }, /accepts\[0\]/],
      [{ ...TERMS, accepts: [{ ...TERMS.accepts[0], network: 'eip155' }] }, /network/],
      [{ ...TERMS, accepts: [{ ...TERMS.accepts[0], network: 'x:1' }] }, /network/],
      [{ ...TERMS, accepts: [{ ...TERMS.accepts[0], amount: 42 }] }, /amount/],
      [{ ...TERMS, extensions: {} }, /paymentTerms/],
    ];
    for (const [body, msg] of cases)
      assert.throws(
        () => normalizeCreatedOrder(body),
        (e: unknown) => e instanceof TollgateResponseError && msg.test(e.message),
      );
  });
});

describe('retry timing', () => {
  it('parseRetryAfter reads delta-seconds and HTTP dates', () => {
    assert.equal(parseRetryAfter('1'), 1000);
    assert.equal(parseRetryAfter(' 30 '), 30_000);
    assert.equal(parseRetryAfter(null), undefined);
    assert.equal(parseRetryAfter('soon'), undefined);
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now), 0);
  });

  it('backoff doubles, is capped, and jitters within [d/2, d]', () => {
    assert.equal(
      backoffDelay(1, 500, 8000, () => 1),
      500,
    );
    assert.equal(
      backoffDelay(1, 500, 8000, () => 0),
      250,
    );
    assert.equal(
      backoffDelay(3, 500, 8000, () => 1),
      2000,
    );
    assert.equal(
      backoffDelay(10, 500, 8000, () => 1),
      8000,
    );
    for (let i = 0; i < 100; i++) {
      const d = backoffDelay(2, 500, 8000);
      assert.ok(d >= 500 && d <= 1000);
    }
  });
});

describe('errors', () => {
  it('every class is a TollgateError and an Error, with its own name and code', () => {
    const api = new TollgateApiError('order not found', { status: 404, code: 'order_not_found', requestId: 'req_1', param: 'order_id' });
    const net = new TollgateNetworkError('refused');
    const tmo = new TollgateTimeoutError('slow', { timeoutMs: 5 });
    const unk = new TollgateUnknownOutcomeError('lost', { method: 'POST', path: '/api/v1/orders', requestBody: {}, rawRequestBody: '{}', dappOrderId: 'A' }, { cause: tmo });
    for (const [e, name, code] of [
      [api, 'TollgateApiError', 'order_not_found'],
      [net, 'TollgateNetworkError', 'network_error'],
      [tmo, 'TollgateTimeoutError', 'timeout'],
      [unk, 'TollgateUnknownOutcomeError', 'unknown_outcome'],
    ] as const) {
      assert.ok(e instanceof TollgateError && e instanceof Error);
      assert.equal(e.name, name);
      assert.equal(e.code, code);
    }
    assert.equal(api.message, 'order not found (HTTP 404, order_not_found, request req_1)');
    assert.equal(api.shortMessage, 'order not found');
    assert.ok(!(unk instanceof TollgateNetworkError));
    assert.equal(
      unk.walk((e) => e instanceof TollgateTimeoutError),
      tmo,
    );
    assert.equal(unk.walk(), tmo);
    assert.equal(
      unk.walk((e) => e instanceof TollgateApiError),
      undefined,
    );
  });

  it('isTerminalOrderStatus: only the four terminal states; unknown values are not terminal', () => {
    assert.deepEqual(['CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED', 'INVOICED', 'FAILED', 'EXPIRED', 'CANCELLED', 'SETTLING'].map(isTerminalOrderStatus), [false, false, true, true, true, true, false]);
  });
});

describe('waitForOrder (scripted server)', () => {
  it('rides out transient failures between polls and reports an unknown status as a change', async () => {
    const script = [503, 'SETTLING', 'drop', 429, 'INVOICED'];
    const rec = await startRecorder((_r, res, n) => {
      const step = script[n - 1] ?? 'INVOICED';
      if (step === 'drop') return res.socket!.destroy();
      if (typeof step === 'number') return sendJson(res, step, { error: 'busy', code: step === 429 ? 'rate_limited' : 'service_unavailable', request_id: 'req_1' });
      sendJson(res, 200, { order_id: 'ord_1', status: step });
    });
    try {
      const client = new TollgateClient({ baseUrl: rec.url, apiKey: 'k', apiSecret: 's', maxAttempts: 1 });
      const seen: string[] = [];
      const final = await client.waitForOrder('ord_1', { intervalMs: 10, timeoutMs: 5000, onStatusChange: (o) => void seen.push(o.status) });
      assert.equal(final.status, 'INVOICED');
      assert.deepEqual(seen, ['SETTLING', 'INVOICED']);
      assert.equal(rec.requests.length, 5);
    } finally {
      await rec.close();
    }
  });

  it('a throwing callback rejects the wait; the timeout error keeps the last transient failure as cause', async () => {
    const rec = await startRecorder((_r, res, n) => (n === 1 ? sendJson(res, 200, { order_id: 'ord_1', status: 'CHECKOUT_VERIFIED' }) : sendJson(res, 503, {})));
    try {
      const client = new TollgateClient({ baseUrl: rec.url, apiKey: 'k', apiSecret: 's', maxAttempts: 1 });
      await assert.rejects(
        client.waitForOrder('ord_1', {
          onStatusChange: () => {
            throw new Error('bug in callback');
          },
        }),
        /bug in callback/,
      );
      rec.requests.splice(0);
      await assert.rejects(client.waitForOrder('ord_1', { intervalMs: 10, timeoutMs: 200 }), (err: unknown) => {
        assert.ok(err instanceof TollgateTimeoutError);
        assert.ok(err.cause instanceof TollgateApiError && err.cause.status === 503);
        return true;
      });
      await assert.rejects(client.waitForOrder('ord_1', { intervalMs: -1 }), TypeError);
    } finally {
      await rec.close();
    }
  });
});
