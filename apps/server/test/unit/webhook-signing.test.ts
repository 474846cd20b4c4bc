import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { generateWebhookSecret, verifyStandardWebhook, verifyWebhookSignature } from '@tollgate/protocol';
import { deliveryHeaders, envelopeBody } from '../../src/webhooks/signing.ts';

const hmacHex = (secret: string, body: string) => createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');

describe('webhook envelope and signing', () => {
  it('the envelope has the documented shape (docs/webhooks.md) and the stored payload text verbatim', () => {
    const payload = '{"order_id":"ord_1","amount_wei":"5","nested":{"z":1,"a":[1,2]}}';
    const body = envelopeBody('evt_1', 'order.invoiced', payload, new Date('2025-01-02T03:04:05.678Z'));
    assert.equal(body, `{"id":"evt_1","event":"order.invoiced","payload":${payload},"created_at":"2025-01-02T03:04:05.678Z"}`);
    assert.deepEqual(Object.keys(JSON.parse(body)), ['id', 'event', 'payload', 'created_at']);
  });

  it('one secret: X-Webhook-Signature is the HMAC of the raw body; Standard Webhooks headers verify', () => {
    const secret = generateWebhookSecret();
    const body = envelopeBody('evt_2', 'order.cancelled', '{"order_id":"ord_2"}', new Date());
    const ts = Math.floor(Date.now() / 1000);
    const h = deliveryHeaders({ secrets: { current: secret }, event: 'order.cancelled', eventId: 'evt_2', timestampSeconds: ts, rawBody: body });
    assert.equal(h['X-Webhook-Signature'], `sha256=${hmacHex(secret, body)}`);
    assert.equal(h['X-Webhook-Event'], 'order.cancelled');
    assert.equal(h['Content-Type'], 'application/json');
    assert.equal(h['webhook-id'], 'evt_2');
    assert.equal(h['webhook-timestamp'], String(ts));
    assert.match(h['webhook-signature']!, /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(verifyStandardWebhook({ secret, headers: h, rawBody: body }), { ok: true, id: 'evt_2', timestamp: ts });
  });

  it('during a rotation overlap: X-Webhook-Signature uses the previous secret, webhook-signature carries both', () => {
    const previous = generateWebhookSecret();
    const current = generateWebhookSecret();
    const body = envelopeBody('evt_3', 'order.invoiced', '{"order_id":"ord_3"}', new Date());
    const ts = Math.floor(Date.now() / 1000);
    const h = deliveryHeaders({ secrets: { current, previous }, event: 'order.invoiced', eventId: 'evt_3', timestampSeconds: ts, rawBody: body });
    assert.equal(h['X-Webhook-Signature'], `sha256=${hmacHex(previous, body)}`);
    assert.equal(verifyWebhookSignature({ secret: previous, rawBody: body, header: h['X-Webhook-Signature'] }), true);
    assert.equal(verifyWebhookSignature({ secret: current, rawBody: body, header: h['X-Webhook-Signature'] }), false);
    assert.equal(verifyWebhookSignature({ secret: [current, previous], rawBody: body, header: h['X-Webhook-Signature'] }), true);
    const sigs = h['webhook-signature']!.split(' ');
    assert.equal(sigs.length, 2);
    // either secret alone verifies the Standard Webhooks header: receivers switch whenever they like
    assert.equal(verifyStandardWebhook({ secret: current, headers: h, rawBody: body }).ok, true);
    assert.equal(verifyStandardWebhook({ secret: previous, headers: h, rawBody: body }).ok, true);
    assert.equal(verifyStandardWebhook({ secret: generateWebhookSecret(), headers: h, rawBody: body }).ok, false);
    // the first signature is the new secret's (Standard Webhooks: newest first)
    assert.equal(verifyStandardWebhook({ secret: current, headers: { ...h, 'webhook-signature': sigs[0]! }, rawBody: body }).ok, true);
  });
});
