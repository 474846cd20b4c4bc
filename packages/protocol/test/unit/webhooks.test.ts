import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import {
  generateWebhookSecret,
  isWebhookEvent,
  signWebhookBody,
  standardWebhookHeaders,
  standardWebhookKey,
  verifyStandardWebhook,
  verifyWebhookSignature,
  WEBHOOK_EVENTS,
  webhookDeliveryHeaders,
  WebhookVerificationError,
  type WebhookEnvelope,
} from '../../src/index.ts';
import { prng } from './prng.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const envelope: WebhookEnvelope = {
  id: 'evt_5HueCGU8rMjxEXxiPuD5BD',
  event: 'order.invoiced',
  payload: { order_id: 'ord_7dQmXH3s9PvK2wJ8cLrT4y', status: 'INVOICED', amount_wei: '1000000' },
  created_at: '2025-01-01T00:00:00Z',
};
const RAW = JSON.stringify(envelope);

test('signWebhookBody: sha256= + 64 lowercase hex of HMAC keyed by the whole secret string', () => {
  const h = signWebhookBody(SECRET, RAW);
  assert.match(h, /^sha256=[0-9a-f]{64}$/);
  assert.equal(h, `sha256=${createHmac('sha256', SECRET).update(RAW).digest('hex')}`);
  // Not the Standard Webhooks key: the prefix and base64 text are the key bytes here.
  assert.notEqual(h, `sha256=${createHmac('sha256', standardWebhookKey(SECRET)!).update(RAW).digest('hex')}`);
  assert.throws(() => signWebhookBody('', RAW), TypeError);
});

test('signWebhookBody: string, Buffer and an offset Uint8Array view of the same bytes sign alike', () => {
  const bytes = Buffer.from(`xx${RAW}yy`, 'utf8');
  const view = new Uint8Array(bytes.buffer, bytes.byteOffset + 2, bytes.length - 4);
  assert.equal(signWebhookBody(SECRET, view), signWebhookBody(SECRET, RAW));
  assert.equal(signWebhookBody(SECRET, Buffer.from(RAW)), signWebhookBody(SECRET, RAW));
  assert.equal(signWebhookBody(SECRET, ''), `sha256=${createHmac('sha256', SECRET).update('').digest('hex')}`);
});

test('verifyWebhookSignature: valid, tampered, and re-serialized bodies', () => {
  const header = signWebhookBody(SECRET, RAW);
  assert.equal(verifyWebhookSignature({ secret: SECRET, rawBody: RAW, header }), true);
  assert.equal(verifyWebhookSignature({ secret: SECRET, rawBody: Buffer.from(RAW), header }), true);
  assert.equal(verifyWebhookSignature({ secret: SECRET, rawBody: RAW.replace('1000000', '1000001'), header }), false);
  // The classic mistake: parse, then stringify again with other spacing. Same data, other bytes.
  const reserialized = JSON.stringify(JSON.parse(RAW), null, 2);
  assert.equal(verifyWebhookSignature({ secret: SECRET, rawBody: reserialized, header }), false);
  assert.equal(verifyWebhookSignature({ secret: `${SECRET}x`, rawBody: RAW, header }), false);
});

test('verifyWebhookSignature: malformed headers fail', () => {
  const good = signWebhookBody(SECRET, RAW);
  const hex = good.slice('sha256='.length);
  for (const header of [
    undefined,
    '',
    hex,
    `sha256=${hex.toUpperCase()}`,
    `SHA256=${hex}`,
    `sha256= ${hex}`,
    ` ${good}`,
    `${good} `,
    `${good},${good}`,
    `sha256=${hex.slice(0, 63)}`,
    `sha256=${hex}0`,
    `sha1=${hex.slice(0, 40)}`,
    `sha256=${Buffer.from(hex, 'hex').toString('base64')}`,
    ['a'] as unknown as string,
  ]) {
    assert.equal(verifyWebhookSignature({ secret: SECRET, rawBody: RAW, header }), false, String(header));
  }
});

test('verifyWebhookSignature: rotation with several secrets; empty secrets never count', () => {
  const next = generateWebhookSecret();
  const header = signWebhookBody(next, RAW);
  assert.equal(verifyWebhookSignature({ secret: [SECRET, next], rawBody: RAW, header }), true);
  assert.equal(verifyWebhookSignature({ secret: [next, SECRET], rawBody: RAW, header }), true);
  assert.equal(verifyWebhookSignature({ secret: [SECRET], rawBody: RAW, header }), false);
  assert.equal(verifyWebhookSignature({ secret: [], rawBody: RAW, header }), false);
  assert.equal(verifyWebhookSignature({ secret: '', rawBody: RAW, header }), false);
  assert.equal(verifyWebhookSignature({ secret: ['', ''], rawBody: RAW, header }), false);
  assert.equal(verifyWebhookSignature({ secret: undefined as unknown as string, rawBody: RAW, header }), false);
  // An attacker who guesses the receiver has no secret configured signs with the empty key.
  const forged = `sha256=${createHmac('sha256', '').update(RAW).digest('hex')}`;
  assert.equal(verifyWebhookSignature({ secret: '', rawBody: RAW, header: forged }), false);
});

test('verifyWebhookSignature: a parsed body throws an error that explains the raw-body mistake', () => {
  const header = signWebhookBody(SECRET, RAW);
  for (const rawBody of [JSON.parse(RAW), null, undefined, 42, [1, 2]]) {
    assert.throws(
      () => verifyWebhookSignature({ secret: SECRET, rawBody: rawBody as string, header }),
      (e: unknown) => e instanceof WebhookVerificationError && e.name === 'WebhookVerificationError' && /raw request body/.test(e.message) && /express\.raw/.test(e.message) && /fastify/.test(e.message),
    );
  }
});

test('Standard Webhooks: the published reference vector', () => {
  const h = standardWebhookHeaders({
    secret: SECRET,
    id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    timestamp: 1614265330,
    rawBody: '{"test": 2432232314}',
  });
  assert.deepEqual(h, {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  });
  const r = verifyStandardWebhook({ secret: SECRET, headers: h, rawBody: '{"test": 2432232314}', now: () => 1614265330_000 });
  assert.deepEqual(r, { ok: true, id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: 1614265330 });
});

test('standardWebhookKey: whsec_ prefix optional, strict padded base64', () => {
  assert.equal(standardWebhookKey(SECRET)?.length, 24);
  assert.deepEqual(standardWebhookKey('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), standardWebhookKey(SECRET));
  for (const bad of ['', 'whsec_', 'whsec_abc', 'whsec_ab!d', 'whsec_YWJj ZA==', 'whsec_YWJjZA', 'whsec_YW-_ZA==', 'whsec_=AAA']) {
    assert.equal(standardWebhookKey(bad), undefined, bad);
  }
  assert.deepEqual(standardWebhookKey('whsec_YWJjZA=='), Buffer.from('abcd'));
});

test('generateWebhookSecret: whsec_ + base64 of 32 random bytes, unique', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const s = generateWebhookSecret();
    assert.match(s, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(standardWebhookKey(s)?.length, 32);
    seen.add(s);
  }
  assert.equal(seen.size, 200);
});

const T = 1735689600;
const fresh = (id = envelope.id, secret = SECRET) => standardWebhookHeaders({ secret, id, timestamp: T, rawBody: RAW });

test('verifyStandardWebhook: ±tolerance inclusive, reasons for each failure', () => {
  const headers = fresh();
  const at = (s: number) => () => s * 1000;
  assert.equal(verifyStandardWebhook({ secret: SECRET, headers, rawBody: RAW, now: at(T + 300) }).ok, true);
  assert.equal(verifyStandardWebhook({ secret: SECRET, headers, rawBody: RAW, now: at(T - 300) }).ok, true);
  assert.deepEqual(verifyStandardWebhook({ secret: SECRET, headers, rawBody: RAW, now: at(T + 301) }), { ok: false, reason: 'timestamp_too_old' });
  assert.deepEqual(verifyStandardWebhook({ secret: SECRET, headers, rawBody: RAW, now: at(T - 301) }), { ok: false, reason: 'timestamp_too_new' });
  assert.equal(verifyStandardWebhook({ secret: SECRET, headers, rawBody: RAW, now: at(T + 3600), toleranceSeconds: 3600 }).ok, true);
  assert.deepEqual(verifyStandardWebhook({ secret: SECRET, headers, rawBody: `${RAW} `, now: at(T) }), { ok: false, reason: 'signature_mismatch' });
  assert.deepEqual(verifyStandardWebhook({ secret: generateWebhookSecret(), headers, rawBody: RAW, now: at(T) }), { ok: false, reason: 'signature_mismatch' });
  assert.deepEqual(verifyStandardWebhook({ secret: 'whsec_not base64', headers, rawBody: RAW, now: at(T) }), { ok: false, reason: 'secret_invalid' });
  assert.deepEqual(verifyStandardWebhook({ secret: [], headers, rawBody: RAW, now: at(T) }), { ok: false, reason: 'secret_invalid' });
  for (const drop of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
    const h: Record<string, string> = { ...headers };
    delete h[drop];
    assert.deepEqual(verifyStandardWebhook({ secret: SECRET, headers: h, rawBody: RAW, now: at(T) }), { ok: false, reason: 'headers_missing' });
  }
  for (const ts of ['abc', '1735689600.5', '-1', ' 1735689600', '1e9']) {
    const r = verifyStandardWebhook({ secret: SECRET, headers: { ...headers, 'webhook-timestamp': ts }, rawBody: RAW, now: at(T) });
    assert.deepEqual(r, { ok: false, reason: 'timestamp_invalid' }, ts);
  }
});

test('verifyStandardWebhook: the id and timestamp are signed', () => {
  const headers = fresh();
  const now = () => T * 1000;
  const otherId = { ...headers, 'webhook-id': 'evt_other' };
  assert.equal(verifyStandardWebhook({ secret: SECRET, headers: otherId, rawBody: RAW, now }).ok, false);
  const otherTs = { ...headers, 'webhook-timestamp': String(T + 1) };
  assert.equal(verifyStandardWebhook({ secret: SECRET, headers: otherTs, rawBody: RAW, now }).ok, false);
});

test('verifyStandardWebhook: several signatures, unknown versions, rotation, header sources', () => {
  const now = () => T * 1000;
  const next = generateWebhookSecret();
  const a = fresh(envelope.id, SECRET)['webhook-signature'];
  const b = fresh(envelope.id, next)['webhook-signature'];
  const base = fresh();
  const multi = { ...base, 'webhook-signature': `v1a,${a.slice(3)} v2,${a.slice(3)} ${b}` };
  assert.equal(verifyStandardWebhook({ secret: next, headers: multi, rawBody: RAW, now }).ok, true);
  assert.equal(verifyStandardWebhook({ secret: SECRET, headers: multi, rawBody: RAW, now }).ok, false, 'only v1 counts');
  assert.equal(verifyStandardWebhook({ secret: [SECRET, next], headers: { ...base, 'webhook-signature': b }, rawBody: RAW, now }).ok, true);
  assert.equal(verifyStandardWebhook({ secret: SECRET, headers: { ...base, 'webhook-signature': `v1,${a.slice(3, -1)}` }, rawBody: RAW, now }).ok, false);

  const fetchHeaders = new Headers(base);
  assert.equal(verifyStandardWebhook({ secret: SECRET, headers: fetchHeaders, rawBody: RAW, now }).ok, true);
  const mixedCase = { 'Webhook-Id': base['webhook-id'], 'WEBHOOK-TIMESTAMP': base['webhook-timestamp'], 'Webhook-Signature': a };
  assert.equal(verifyStandardWebhook({ secret: SECRET, headers: mixedCase, rawBody: RAW, now }).ok, true);
  const doubled = { ...base, 'webhook-signature': [a, a] };
  assert.deepEqual(verifyStandardWebhook({ secret: SECRET, headers: doubled, rawBody: RAW, now }), { ok: false, reason: 'headers_missing' });
  assert.throws(() => verifyStandardWebhook({ secret: SECRET, headers: base, rawBody: envelope as unknown as string, now }), WebhookVerificationError);
});

test('standardWebhookHeaders: rejects a non-whsec secret, a bad id, a bad timestamp', () => {
  assert.throws(() => standardWebhookHeaders({ secret: 'plain secret', id: 'evt_1', timestamp: T, rawBody: RAW }), TypeError);
  for (const id of ['', 'evt 1', 'evt\n1', 'évt']) {
    assert.throws(() => standardWebhookHeaders({ secret: SECRET, id, timestamp: T, rawBody: RAW }), TypeError, id);
  }
  for (const timestamp of [-1, 1.5, NaN, Infinity, T * 1000]) {
    assert.throws(() => standardWebhookHeaders({ secret: SECRET, id: 'evt_1', timestamp, rawBody: RAW }), TypeError, String(timestamp));
  }
});

test('webhookDeliveryHeaders: all five headers, both signatures verify against the same raw body', () => {
  const secret = generateWebhookSecret();
  const h = webhookDeliveryHeaders({ secret, event: envelope.event, id: envelope.id, timestamp: T, rawBody: RAW });
  assert.deepEqual(Object.keys(h).sort(), ['Content-Type', 'X-Webhook-Event', 'X-Webhook-Signature', 'webhook-id', 'webhook-signature', 'webhook-timestamp']);
  assert.equal(h['Content-Type'], 'application/json');
  assert.equal(h['X-Webhook-Event'], 'order.invoiced');
  assert.equal(h['webhook-id'], envelope.id);
  assert.equal(verifyWebhookSignature({ secret, rawBody: RAW, header: h['X-Webhook-Signature'] }), true);
  assert.equal(verifyStandardWebhook({ secret, headers: h, rawBody: RAW, now: () => T * 1000 }).ok, true);
});

test('WEBHOOK_EVENTS and isWebhookEvent', () => {
  assert.deepEqual(
    [...WEBHOOK_EVENTS],
    [
      'order.payment_confirmed',
      'order.invoiced',
      'order.expired',
      'order.cancelled',
      'order.failed',
      'quickpay.checkout.completed',
      'fiat.payment.succeeded',
      'order.late_payment',
      'order.underpaid',
      'order.duplicate_payment',
      'fiat.payment.refunded',
      'fiat.dispute.updated',
      'order.refunded',
      'x402.settlement.confirmed',
      'mpp.payment.confirmed',
    ],
  );
  for (const e of WEBHOOK_EVENTS) assert.equal(isWebhookEvent(e), true);
  for (const e of ['order.paid', 'ORDER.INVOICED', '', 'order', undefined, 1]) assert.equal(isWebhookEvent(e), false);
});

test('property: sign/verify round trip for random secrets and bodies, any flipped byte fails (seeded)', () => {
  const r = prng(31337);
  for (let i = 0; i < 300; i++) {
    const secret = r.next() < 0.5 ? generateWebhookSecret() : r.string('abcXYZ019_-+/=é🔑', 1 + r.int(40));
    const body = Buffer.from(r.string('{}[]":,abc0123 é東🚀\\n', r.int(200)), 'utf8');
    const header = signWebhookBody(secret, body);
    assert.equal(verifyWebhookSignature({ secret, rawBody: body, header }), true);
    if (body.length > 0) {
      const bad = Buffer.from(body);
      const k = r.int(bad.length);
      bad[k] = bad[k]! ^ (1 + r.int(255));
      assert.equal(verifyWebhookSignature({ secret, rawBody: bad, header }), false);
    }
    if (secret.startsWith('whsec_')) {
      const h = standardWebhookHeaders({ secret, id: `evt_${i}`, timestamp: T, rawBody: body });
      assert.equal(verifyStandardWebhook({ secret, headers: h, rawBody: body, now: () => T * 1000 }).ok, true);
    }
  }
});
