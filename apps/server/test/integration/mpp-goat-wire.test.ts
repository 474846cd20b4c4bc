import assert from 'node:assert/strict';
import { createHash, createPublicKey, verify as edVerify } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { rpcRequest } from '@tollgate/devchain';
import { getAddress } from 'viem';
import { verifyMppReceipt } from '../../../../packages/sdk/src/receipts.ts';
import { backends } from '../helpers/db.ts';
import { startTestServer } from '../helpers/server.ts';
import { challenge, finalize, pay, ROUTE, startMppStack, verify, type MppStack } from './mpp-fixtures.ts';

/**
 * Conformance with GOAT Network's machine-payment wire on /mpp/v1, written from what GOAT's payer
 * client (`MPPClient` of goatx402-sdk) and its receipt middleware (goatx402-mpp-middleware-ts) send
 * and check — re-implemented here, independently of the server's code:
 * - the client: POST /mpp/v1/challenge expecting 402 and its typed fields; an ERC-20 transfer; POST
 *   /mpp/v1/verify polled while 202 (Retry-After); on 200 the `Payment-Receipt` header, which must
 *   split into exactly three '.'-separated segments whose first is base64url JSON of an object;
 *   errors read as `{ error: <code>, detail }`;
 * - the middleware: `<b64url(JSON receipt)>.<b64url(sig)>.ed25519`, a closed set of sixteen
 *   fields with their types, Ed25519 over SHA-256 of the length-prefixed signing bytes with the raw
 *   32-byte public key it is configured with, then audience (merchant_id), route binding
 *   (request_canonical equal to the route or extending it with ':'), and now < receipt_expires_at.
 */

const RECEIPT_FIELDS = [
  'receipt_id',
  'challenge_id',
  'order_id',
  'merchant_id',
  'payer_addr',
  'chain_id',
  'token_contract',
  'recipient',
  'amount_wei',
  'request_canonical',
  'tx_hash',
  'log_index',
  'block_number',
  'block_timestamp',
  'receipt_issued_at',
  'receipt_expires_at',
] as const;
const STRING_FIELDS = ['receipt_id', 'challenge_id', 'order_id', 'merchant_id', 'payer_addr', 'token_contract', 'recipient', 'amount_wei', 'request_canonical', 'tx_hash'] as const;
const INT_FIELDS = ['chain_id', 'log_index', 'block_number'] as const;
const TIME_FIELDS = ['block_timestamp', 'receipt_issued_at', 'receipt_expires_at'] as const;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

type Receipt = Record<(typeof RECEIPT_FIELDS)[number], any>;

/** The signing bytes as GOAT's middleware lays them out, written with a DataView (not the server's code). */
function signingBytes(r: Receipt): Uint8Array {
  const enc = new TextEncoder();
  const chunks: Uint8Array[] = [];
  const lp = (s: string) => {
    const b = enc.encode(s);
    const out = new Uint8Array(4 + b.length);
    new DataView(out.buffer).setUint32(0, b.length, false);
    out.set(b, 4);
    chunks.push(out);
  };
  const i64 = (n: number) => {
    const out = new Uint8Array(8);
    new DataView(out.buffer).setBigInt64(0, BigInt(n), false);
    chunks.push(out);
  };
  const sec = (iso: string) => Math.floor(Date.parse(iso) / 1000);
  lp(r.receipt_id);
  lp(r.challenge_id);
  lp(r.order_id);
  lp(r.merchant_id);
  lp(r.payer_addr);
  i64(r.chain_id);
  lp(r.token_contract);
  lp(r.recipient);
  lp(r.amount_wei);
  lp(r.request_canonical);
  lp(r.tx_hash);
  i64(r.log_index);
  i64(r.block_number);
  i64(sec(r.block_timestamp));
  i64(sec(r.receipt_issued_at));
  i64(sec(r.receipt_expires_at));
  return Buffer.concat(chunks);
}

/** A raw 32-byte Ed25519 public key as a KeyObject (SPKI: the fixed Ed25519 prefix, then the key). */
const rawEd25519 = (raw: Buffer) => createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });

type Check = { ok: true; receipt: Receipt } | { ok: false; status: number; reason: string };

/** The middleware's checks, in its order, with its reason codes. */
function middlewareCheck(header: string, cfg: { merchantId: string; routeCanonical: string; publicKey: Buffer; nowMs: number }): Check {
  const fail = (status: number, reason: string): Check => ({ ok: false, status, reason });
  const parts = header.split('.');
  if (parts.length !== 3) return fail(401, 'invalid_payment_receipt');
  const [body, sig, alg] = parts as [string, string, string];
  if (alg !== 'ed25519' && alg !== 'hmac-sha256') return fail(401, 'invalid_payment_receipt');
  if (!/^[A-Za-z0-9_-]*$/.test(body) || !/^[A-Za-z0-9_-]*$/.test(sig)) return fail(401, 'invalid_payment_receipt');
  let r: Receipt;
  try {
    r = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(body, 'base64url')));
  } catch {
    return fail(401, 'invalid_payment_receipt');
  }
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return fail(401, 'invalid_payment_receipt');
  if (Object.keys(r).some((k) => !(RECEIPT_FIELDS as readonly string[]).includes(k))) return fail(401, 'invalid_payment_receipt');
  for (const k of STRING_FIELDS) if (typeof r[k] !== 'string' || r[k] === '') return fail(401, 'invalid_payment_receipt');
  for (const k of INT_FIELDS) if (!Number.isSafeInteger(r[k]) || r[k] < 0) return fail(401, 'invalid_payment_receipt');
  for (const k of TIME_FIELDS) if (typeof r[k] !== 'string' || !RFC3339.test(r[k])) return fail(401, 'invalid_payment_receipt');
  if (alg !== 'ed25519') return fail(401, 'invalid_signature');
  const signature = Buffer.from(sig, 'base64url');
  const digest = createHash('sha256').update(signingBytes(r)).digest();
  if (signature.length !== 64 || !edVerify(null, digest, rawEd25519(cfg.publicKey), signature)) return fail(401, 'invalid_signature');
  if (r.merchant_id !== cfg.merchantId) return fail(401, 'audience_mismatch');
  if (r.request_canonical !== cfg.routeCanonical && !r.request_canonical.startsWith(`${cfg.routeCanonical}:`)) return fail(402, 'route_mismatch');
  if (!(cfg.nowMs < Date.parse(r.receipt_expires_at))) return fail(402, 'receipt_expired');
  return { ok: true, receipt: r };
}

/** What GOAT's client makes of an error answer: `code` from `error`, the message `code: detail`. */
function clientError(body: any, status: number): { code: string; message: string } {
  const code = typeof body?.error === 'string' && body.error !== '' ? body.error : `http_${status}`;
  const detail = typeof body?.detail === 'string' ? body.detail : '';
  return { code, message: detail !== '' ? `${code}: ${detail}` : code };
}

for (const backend of backends()) {
  describe(`GOAT machine-payment wire on /mpp/v1 (${backend})`, () => {
    let st: MppStack;
    let payer: string;
    before(async () => {
      st = await startMppStack(backend);
      // GOAT's client sends the signer's address as ethers gives it: EIP-55 checksummed.
      payer = getAddress(st.dev.payers[0]!.address);
    });
    after(() => st?.close());

    const receiptKey = async () => {
      const r = await st.s.request('GET', '/mpp/v1/receipt-key');
      assert.equal(r.status, 200, r.text);
      return r.body as { algorithm: string; kid: string; public_key: string };
    };

    /** The client's requestChallenge → payChallenge → verifyChallenge, finality driven by mining instead of waiting. */
    async function payAndVerify(request: string) {
      const ch = await st.s.request('POST', '/mpp/v1/challenge', { body: { merchant_id: st.m.merchantId, route_canonical: ROUTE, request_canonical: request, payer_addr: payer } });
      assert.equal(ch.status, 402, ch.text);
      const c = ch.body;
      for (const k of ['challenge_id', 'amount_wei', 'token_contract', 'recipient', 'mac']) assert.ok(typeof c[k] === 'string' && c[k] !== '', k);
      for (const k of ['expiry', 'chain_id', 'route_pricing_version']) assert.ok(Number.isFinite(c[k]), k);
      assert.equal(c.chain_id, st.dev.chainId);
      const tx = await pay(st, 0, c.recipient, BigInt(c.amount_wei));
      const body = { challenge_id: c.challenge_id, tx_hash: tx, payer_addr: payer, mac: c.mac };
      const pending = await verify(st, body);
      assert.equal(pending.status, 202, pending.text);
      assert.match(pending.headers.get('retry-after')!, /^\d+$/);
      await finalize(st);
      const done = await verify(st, body);
      assert.equal(done.status, 200, done.text);
      return { c, tx, body, done, header: done.headers.get('payment-receipt')! };
    }

    it("pays a challenge and the Payment-Receipt passes GOAT's client decoding and every middleware check", async () => {
      const { c, tx, done, header } = await payAndVerify(`${ROUTE}:item7`);
      // The client: exactly three segments, the first base64url JSON of an object.
      const segments = header.split('.');
      assert.equal(segments.length, 3);
      assert.equal(segments[2], 'ed25519');
      const decoded = JSON.parse(Buffer.from(segments[0]!, 'base64url').toString('utf8'));
      assert.equal(typeof decoded, 'object');

      // The middleware, with the key as a merchant configures it (32 raw bytes from /mpp/v1/receipt-key).
      const key = await receiptKey();
      assert.equal(key.algorithm, 'ed25519');
      const publicKey = Buffer.from(key.public_key, 'hex');
      assert.equal(publicKey.length, 32);
      const jwks = (await st.s.request('GET', '/.well-known/jwks.json')).body;
      assert.equal(jwks.keys[0].kid, key.kid);
      assert.equal(Buffer.from(jwks.keys[0].x, 'base64url').toString('hex'), key.public_key, 'the JWKS publishes the same 32 bytes');
      const cfg = { merchantId: st.m.merchantId, routeCanonical: ROUTE, publicKey, nowMs: st.s.clock.now() };
      const v = middlewareCheck(header, cfg);
      assert.ok(v.ok, JSON.stringify(v));

      // Every field states the payment as the chain and the challenge have it.
      const mined = await rpcRequest<{ blockNumber: string; logs: { logIndex: string }[] }>(st.dev.rpcUrl, 'eth_getTransactionReceipt', [tx]);
      const block = await rpcRequest<{ timestamp: string }>(st.dev.rpcUrl, 'eth_getBlockByNumber', [mined.blockNumber, false]);
      const r = v.receipt;
      assert.deepEqual(Object.keys(r).sort(), [...RECEIPT_FIELDS].sort());
      assert.deepEqual(
        [r.challenge_id, r.merchant_id, r.payer_addr, r.chain_id, r.token_contract, r.recipient, r.amount_wei, r.request_canonical, r.tx_hash],
        [c.challenge_id, st.m.merchantId, payer.toLowerCase(), st.dev.chainId, c.token_contract, c.recipient, c.amount_wei, `${ROUTE}:item7`, tx],
      );
      assert.equal(r.block_number, Number(mined.blockNumber));
      assert.equal(r.log_index, Number(mined.logs[0]!.logIndex));
      assert.equal(Date.parse(r.block_timestamp) / 1000, Number(block.timestamp));
      assert.equal(Date.parse(r.receipt_issued_at) / 1000, done.body.issued_at);
      assert.equal((Date.parse(r.receipt_expires_at) - Date.parse(r.receipt_issued_at)) / 1000, 3600);
      assert.match(r.receipt_id, /^rcpt_[A-Za-z0-9_-]{22}$/);

      // The body keeps Tollgate's JWS receipt (JWKS-verified) for the same payment.
      const jv = verifyMppReceipt(done.body.receipt, jwks);
      assert.ok(jv.ok, JSON.stringify(jv));
      assert.deepEqual([jv.claims.challenge_id, jv.claims.tx_hash, jv.claims.log_index], [r.challenge_id, r.tx_hash, r.log_index]);

      // The middleware's refusals of the same receipt: altered field, other merchant, other route, expired, other key.
      const altered = Buffer.from(JSON.stringify({ ...r, amount_wei: '999999999' })).toString('base64url');
      assert.deepEqual(middlewareCheck(`${altered}.${segments[1]}.ed25519`, cfg), { ok: false, status: 401, reason: 'invalid_signature' });
      const extra = Buffer.from(JSON.stringify({ ...r, finality: 3 })).toString('base64url');
      assert.deepEqual(middlewareCheck(`${extra}.${segments[1]}.ed25519`, cfg), { ok: false, status: 401, reason: 'invalid_payment_receipt' });
      assert.deepEqual(middlewareCheck(header, { ...cfg, merchantId: 'mch_other' }), { ok: false, status: 401, reason: 'audience_mismatch' });
      assert.deepEqual(middlewareCheck(header, { ...cfg, routeCanonical: 'GET:api:dat' }), { ok: false, status: 402, reason: 'route_mismatch' });
      assert.deepEqual(middlewareCheck(header, { ...cfg, nowMs: Date.parse(r.receipt_expires_at) }), { ok: false, status: 402, reason: 'receipt_expired' });
      assert.deepEqual(middlewareCheck(header, { ...cfg, publicKey: Buffer.alloc(32, 7) }), { ok: false, status: 401, reason: 'invalid_signature' });
    });

    it('a repeated verify answers the identical receipt, also after a key rotation; new receipts use the published new key', async () => {
      const first = await payAndVerify(`${ROUTE}:rot1`);
      const oldKey = await receiptKey();
      const rot = await st.s.admin('POST', '/admin/v1/mpp/receipt-keys');
      assert.equal(rot.status, 201, rot.text);
      const again = await verify(st, first.body);
      assert.equal(again.status, 200, again.text);
      assert.equal(again.headers.get('payment-receipt'), first.header, 'same bytes, signed by the key that signed it first');
      const newKey = await receiptKey();
      assert.equal(newKey.kid, rot.body.kid);
      assert.notEqual(newKey.public_key, oldKey.public_key);
      const later = await payAndVerify(`${ROUTE}:rot2`);
      const cfg = { merchantId: st.m.merchantId, routeCanonical: ROUTE, nowMs: st.s.clock.now() };
      assert.ok(middlewareCheck(later.header, { ...cfg, publicKey: Buffer.from(newKey.public_key, 'hex') }).ok);
      assert.deepEqual(middlewareCheck(later.header, { ...cfg, publicKey: Buffer.from(oldKey.public_key, 'hex') }), { ok: false, status: 401, reason: 'invalid_signature' });
      assert.ok(middlewareCheck(first.header, { ...cfg, publicKey: Buffer.from(oldKey.public_key, 'hex') }).ok);
    });

    it("errors on /mpp/v1 carry the code in `error` (and `detail`), other routes keep Tollgate's envelope", async () => {
      const c = (await challenge(st, payer.toLowerCase(), `${ROUTE}:e1`)).body;
      const cases: [Promise<any>, number, string][] = [
        [verify(st, { challenge_id: c.challenge_id, tx_hash: `0x${'ab'.repeat(32)}`, payer_addr: payer, mac: c.mac.slice(0, -2) + (c.mac.endsWith('AA') ? 'BB' : 'AA') }), 401, 'invalid_mac'],
        [verify(st, { challenge_id: c.challenge_id, tx_hash: `0x${'ab'.repeat(32)}`, payer_addr: getAddress(st.dev.payers[1]!.address), mac: c.mac }), 401, 'payer_mismatch'],
        [st.s.request('POST', '/mpp/v1/verify', { body: { challenge_id: c.challenge_id, tx_hash: '0x12', payer_addr: payer, mac: c.mac } }), 400, 'invalid_request'],
        [st.s.request('POST', '/mpp/v1/challenge', { body: { merchant_id: 'mch_nobody', route_canonical: ROUTE, request_canonical: ROUTE, payer_addr: payer } }), 404, 'merchant_not_found'],
        [st.s.request('POST', '/mpp/v1/challenge', { body: { merchant_id: st.m.merchantId, route_canonical: 'GET:api:none', request_canonical: 'GET:api:none', payer_addr: payer } }), 404, 'route_not_priced'],
        [st.s.request('POST', '/mpp/v1/challenge', { rawBody: '{"merchant_id":' }), 400, 'invalid_json'],
      ];
      for (const [p, status, code] of cases) {
        const r = await p;
        assert.equal(r.status, status, r.text);
        assert.deepEqual([r.body.error, r.body.code], [code, code], r.text);
        assert.ok(typeof r.body.detail === 'string' && r.body.detail.length > 0, r.text);
        assert.equal(clientError(r.body, r.status).code, code);
        assert.equal(clientError(r.body, r.status).message, `${code}: ${r.body.detail}`);
      }
      // Elsewhere `error` stays the sentence beside `code`, as the envelope defines it.
      const other = await st.s.request('GET', '/merchants/mch_nobody');
      assert.equal(other.status, 404, other.text);
      assert.notEqual(other.body.error, other.body.code);
      assert.equal(other.body.detail, undefined);
      const payment = await st.s.request('POST', '/mpp/v1/payment', { body: { merchant_id: 'mch_nobody', route_canonical: ROUTE, request_canonical: ROUTE } });
      assert.equal(payment.status, 404, payment.text);
      assert.notEqual(payment.body.error, payment.body.code);
    });

    it("a rate-limited /mpp/v1 request is 429 with Retry-After and the code in `error` (what GOAT's client retries on)", async () => {
      const limited = await startTestServer({ backend, role: 'api', http: { rateLimits: { machine_payment: { max: 1, timeWindowMs: 60_000 } } } });
      try {
        const body = { merchant_id: 'mch_nobody', route_canonical: ROUTE, request_canonical: ROUTE, payer_addr: payer };
        const first = await limited.request('POST', '/mpp/v1/challenge', { body });
        assert.deepEqual([first.status, first.body.error], [404, 'merchant_not_found'], first.text);
        const second = await limited.request('POST', '/mpp/v1/challenge', { body });
        assert.deepEqual([second.status, second.body.error, second.body.code], [429, 'rate_limited', 'rate_limited'], second.text);
        assert.match(second.headers.get('retry-after')!, /^\d+$/);
        assert.equal(clientError(second.body, 429).code, 'rate_limited');
      } finally {
        await limited.close();
      }
    });
  });
}
