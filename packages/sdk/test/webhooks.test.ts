// The webhook verifier: raw bytes verify; a parsed object throws the explanatory error; forged,
// re-serialized and stale deliveries are rejected as values naming the reason.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { webhookDeliveryHeaders } from '../../protocol/src/index.ts';
import { TollgateError, TollgateWebhookError, verifyWebhook, type WebhookEvent } from '../src/index.ts';
import { startRecorder } from './helpers/recorder.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OLD_SECRET = 'whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24=';
const envelope = {
  id: 'evt_5HueCGU8rMjxEXxiPuD5BD',
  event: 'order.invoiced',
  payload: { order_id: 'ord_7dQmXH3s9PvK2wJ8cLrT4y', dapp_order_id: 'shop-1', status: 'INVOICED', amount_wei: '1000000' },
  created_at: '2025-01-01T00:00:00Z',
} as const;
const RAW = JSON.stringify(envelope);
const now = () => Date.now();

function headersFor(rawBody: string | Uint8Array, secret = SECRET, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
  const h = webhookDeliveryHeaders({ secret, event: 'order.invoiced', id: envelope.id, timestamp, rawBody });
  // Node lowercases header names; use the shape a receiver actually gets.
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

describe('verifyWebhook', () => {
  it('verifies the raw body (string, Buffer, fetch Headers) and returns the parsed event', () => {
    const headers = headersFor(RAW);
    // The interface's own scheme, computed independently.
    assert.equal(headers['x-webhook-signature'], `sha256=${createHmac('sha256', SECRET).update(RAW).digest('hex')}`);
    for (const [rawBody, hdrs] of [
      [RAW, headers],
      [Buffer.from(RAW, 'utf8'), headers],
      [new TextEncoder().encode(RAW), new Headers(headers)],
    ] as const) {
      const v = verifyWebhook({ secret: SECRET, rawBody, headers: hdrs });
      assert.ok(v.ok, JSON.stringify(v));
      assert.deepEqual(v.event, envelope);
    }
  });

  it('a parsed object throws TollgateWebhookError explaining the raw-body mistake', () => {
    const parsed = JSON.parse(RAW) as unknown as string;
    assert.throws(
      () => verifyWebhook({ secret: SECRET, rawBody: parsed, headers: headersFor(RAW) }),
      (err: unknown) => {
        assert.ok(err instanceof TollgateWebhookError);
        assert.ok(err instanceof TollgateError);
        assert.equal(err.code, 'webhook_raw_body_required');
        assert.match(err.message, /raw request body/);
        assert.match(err.message, /re-serialized/);
        assert.match(err.message, /express\.raw/);
        assert.match(err.message, /Got object/);
        return true;
      },
    );
  });

  it('rejects a re-serialized body, a tampered body, and a wrong secret as signature_mismatch', () => {
    const headers = headersFor(RAW);
    const pretty = JSON.stringify(JSON.parse(RAW), null, 2);
    assert.deepEqual(verifyWebhook({ secret: SECRET, rawBody: pretty, headers }), { ok: false, reason: 'signature_mismatch' });
    assert.deepEqual(verifyWebhook({ secret: SECRET, rawBody: RAW.replace('1000000', '9000000'), headers }), { ok: false, reason: 'signature_mismatch' });
    assert.deepEqual(verifyWebhook({ secret: OLD_SECRET, rawBody: RAW, headers }), { ok: false, reason: 'signature_mismatch' });
    assert.deepEqual(verifyWebhook({ secret: SECRET, rawBody: RAW, headers: { ...headers, 'x-webhook-signature': headers['x-webhook-signature']!.toUpperCase() } }), {
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('accepts any secret of a rotation list; an empty or missing secret is secret_invalid, not a forgery', () => {
    assert.equal(verifyWebhook({ secret: [OLD_SECRET, SECRET], rawBody: RAW, headers: headersFor(RAW) }).ok, true);
    assert.equal(verifyWebhook({ secret: [SECRET, OLD_SECRET], rawBody: RAW, headers: headersFor(RAW, OLD_SECRET) }).ok, true);
    assert.deepEqual(verifyWebhook({ secret: '', rawBody: RAW, headers: headersFor(RAW) }), { ok: false, reason: 'secret_invalid' });
    assert.deepEqual(verifyWebhook({ secret: undefined as unknown as string, rawBody: RAW, headers: headersFor(RAW) }), { ok: false, reason: 'secret_invalid' });
  });

  it('freshness: a stale or missing webhook-timestamp is rejected unless toleranceSeconds is null', () => {
    const old = headersFor(RAW, SECRET, Math.floor(Date.now() / 1000) - 600);
    assert.deepEqual(verifyWebhook({ secret: SECRET, rawBody: RAW, headers: old, now }), { ok: false, reason: 'timestamp_too_old' });
    assert.equal(verifyWebhook({ secret: SECRET, rawBody: RAW, headers: old, toleranceSeconds: 900 }).ok, true);
    const onlySig = { 'x-webhook-signature': headersFor(RAW)['x-webhook-signature']! };
    assert.deepEqual(verifyWebhook({ secret: SECRET, rawBody: RAW, headers: onlySig }), { ok: false, reason: 'freshness_headers_missing' });
    assert.equal(verifyWebhook({ secret: SECRET, rawBody: RAW, headers: onlySig, toleranceSeconds: null }).ok, true);
    assert.deepEqual(verifyWebhook({ secret: SECRET, rawBody: RAW, headers: {} }), { ok: false, reason: 'signature_missing' });
  });

  it('a correctly signed body that is not an event envelope is payload_invalid', () => {
    for (const body of ['not json', '[1,2]', '{"event":"order.invoiced"}']) {
      assert.deepEqual(verifyWebhook({ secret: SECRET, rawBody: body, headers: headersFor(body) }), { ok: false, reason: 'payload_invalid' });
    }
  });

  it('works in a real receiver on the bytes node:http delivers, and the event narrows by name', async () => {
    const results: unknown[] = [];
    const receiver = await startRecorder((req, res) => {
      const v = verifyWebhook({ secret: SECRET, rawBody: req.body, headers: req.headers });
      results.push(v);
      res.writeHead(v.ok ? 204 : 400).end();
    });
    try {
      const res = await fetch(`${receiver.url}/hooks`, { method: 'POST', body: RAW, headers: headersFor(RAW) });
      assert.equal(res.status, 204);
      const v = results[0] as { ok: true; event: WebhookEvent };
      assert.ok(v.ok);
      const e = v.event;
      if (e.event === 'order.invoiced') assert.equal(e.payload.dapp_order_id, 'shop-1');
      else assert.fail('expected order.invoiced');
    } finally {
      await receiver.close();
    }
  });
});
