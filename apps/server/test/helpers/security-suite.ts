import assert from 'node:assert/strict';
import { it } from 'node:test';
import { signRequest } from '@tollgate/protocol';
import type { RouteDef } from '../../src/http/route.ts';
import type { Creds, TestServer } from './server.ts';

/**
 * The shared security suite (unkey's common-tests pattern): every merchant-HMAC route must refuse
 * each of these requests with 401 and its code, and accept a correctly signed one. Register it
 * inside a `describe` per route; `ctx()` yields the running server and credentials.
 */
export interface SecurityContext {
  server: TestServer;
  creds: Creds;
  /** Credentials of another merchant. */
  other: Creds;
  /** A key that has been revoked. */
  revoked: Creds;
}

function concretePath(url: string): string {
  return url.replace(/:([a-z_]+)/g, 'ord_doesnotexist');
}

interface Attempt {
  apiKey?: string | undefined;
  timestamp?: string | undefined;
  nonce?: string | undefined;
  sign?: string | undefined;
  /** Body actually sent (defaults to the signed body). */
  sentBody?: Record<string, unknown>;
  sentQuery?: Record<string, string>;
}

export function securitySuite(route: RouteDef<any, any, any>, ctx: () => SecurityContext) {
  const path = concretePath(route.url);
  const hasBody = route.method !== 'GET' && route.method !== 'DELETE';
  const body: Record<string, unknown> | undefined = hasBody ? { probe: 'value', amount_wei: '1000' } : undefined;
  const query: Record<string, string> | undefined = hasBody ? undefined : { probe: 'value' };

  /** Builds headers signed with `secret`, then lets the case break one thing. */
  function send(creds: Creds, a: Attempt = {}, secret = creds.apiSecret) {
    const { server } = ctx();
    const timestamp = 'timestamp' in a ? a.timestamp : String(Math.floor(server.clock.now() / 1000));
    const nonce = 'nonce' in a ? a.nonce : `n-${Math.random().toString(36).slice(2)}-${Date.now()}`;
    const apiKey = 'apiKey' in a ? a.apiKey : creds.apiKey;
    const sign = 'sign' in a ? a.sign : signRequest(secret, { query, body, apiKey: apiKey ?? '', timestamp: timestamp ?? '', nonce: nonce ?? '' });
    const headers: Record<string, string> = {};
    if (apiKey !== undefined) headers['x-api-key'] = apiKey;
    if (timestamp !== undefined) headers['x-timestamp'] = timestamp;
    if (nonce !== undefined) headers['x-nonce'] = nonce;
    if (sign !== undefined) headers['x-sign'] = sign;
    return server.request(route.method, path, {
      headers,
      ...((a.sentQuery ?? query) ? { query: a.sentQuery ?? query } : {}),
      ...((a.sentBody ?? body) ? { body: a.sentBody ?? body } : {}),
    });
  }
  const expect401 = async (p: ReturnType<typeof send>, code: string) => {
    const r = await p;
    assert.equal(r.status, 401, `${route.method} ${route.url}: expected 401 ${code}, got ${r.status} ${r.text}`);
    assert.equal(r.body.code, code);
    assert.match(r.body.request_id, /^req_/);
  };
  const now = () => Math.floor(ctx().server.clock.now() / 1000);

  it('accepts a correctly signed request', async () => {
    const r = await send(ctx().creds);
    assert.notEqual(r.status, 401, r.text);
  });
  it('refuses a request with no auth headers', async () => {
    const r = await ctx().server.request(route.method, path, hasBody ? { body } : {});
    assert.equal(r.status, 401);
  });
  it('refuses a missing X-API-Key', () => expect401(send(ctx().creds, { apiKey: undefined }), 'api_key_invalid'));
  it('refuses a missing X-Timestamp', () => expect401(send(ctx().creds, { timestamp: undefined }), 'timestamp_missing'));
  it('refuses a missing X-Nonce', () => expect401(send(ctx().creds, { nonce: undefined }), 'nonce_missing'));
  it('refuses a missing X-Sign', () => expect401(send(ctx().creds, { sign: undefined }), 'signature_missing'));
  it('refuses a nonce of 7 bytes', () => expect401(send(ctx().creds, { nonce: 'a'.repeat(7) }), 'nonce_invalid'));
  it('refuses a nonce of 129 bytes', () => expect401(send(ctx().creds, { nonce: 'b'.repeat(129) }), 'nonce_invalid'));
  it('refuses a nonce that is 7 bytes after trimming', () => expect401(send(ctx().creds, { nonce: '   1234567   ' }), 'nonce_invalid'));
  it('accepts nonces of exactly 8 and 128 bytes', async () => {
    for (const len of [8, 128]) {
      const r = await send(ctx().creds, { nonce: Math.random().toString(36).slice(2, 6).padEnd(len, 'z') });
      assert.notEqual(r.status, 401, `nonce of ${len}: ${r.text}`);
    }
  });
  it('refuses a timestamp in milliseconds', () => expect401(send(ctx().creds, { timestamp: String(ctx().server.clock.now()) }), 'timestamp_out_of_window'));
  it('refuses a timestamp 301 s old', () => expect401(send(ctx().creds, { timestamp: String(now() - 301) }), 'timestamp_out_of_window'));
  it('refuses a timestamp 301 s in the future', () => expect401(send(ctx().creds, { timestamp: String(now() + 301) }), 'timestamp_out_of_window'));
  it('accepts a timestamp 299 s old', async () => {
    const r = await send(ctx().creds, { timestamp: String(now() - 299) });
    assert.notEqual(r.status, 401, r.text);
  });
  it('refuses a non-numeric timestamp', () => expect401(send(ctx().creds, { timestamp: '2026-11-21T00:00:00Z' }), 'timestamp_out_of_window'));
  it('refuses a signature with a sha256= prefix', async () => {
    const { creds, server } = ctx();
    const ts = String(now());
    const nonce = `prefix-${Date.now()}`;
    const good = signRequest(creds.apiSecret, { query, body, apiKey: creds.apiKey, timestamp: ts, nonce });
    await expect401(send(creds, { timestamp: ts, nonce, sign: `sha256=${good}` }), 'invalid_signature');
    void server;
  });
  it('refuses an uppercase-hex signature', async () => {
    const { creds } = ctx();
    const ts = String(now());
    const nonce = `upper-${Date.now()}`;
    const good = signRequest(creds.apiSecret, { query, body, apiKey: creds.apiKey, timestamp: ts, nonce });
    assert.match(good, /[a-f]/, 'a signature with no letters cannot test case');
    await expect401(send(creds, { timestamp: ts, nonce, sign: good.toUpperCase() }), 'invalid_signature');
  });
  it('refuses a tampered field', async () => {
    const a: Attempt = hasBody ? { sentBody: { ...body, amount_wei: '1001' } } : { sentQuery: { probe: 'other' } };
    await expect401(send(ctx().creds, a), 'invalid_signature');
  });
  it('refuses a request signed with another merchant’s secret', () => expect401(send(ctx().creds, {}, ctx().other.apiSecret), 'invalid_signature'));
  it('refuses an unknown API key', () => expect401(send({ ...ctx().creds, apiKey: 'tg_test_unknownkey' }), 'api_key_invalid'));
  it('refuses a revoked API key', () => expect401(send(ctx().revoked), 'api_key_revoked'));
  it('refuses a replayed nonce with "Replay request detected"', async () => {
    const { creds } = ctx();
    const ts = String(now());
    const nonce = `replay-${Date.now()}-${Math.random()}`;
    const first = await send(creds, { timestamp: ts, nonce });
    assert.notEqual(first.status, 401, first.text);
    const again = await send(creds, { timestamp: ts, nonce });
    assert.equal(again.status, 401);
    assert.equal(again.body.code, 'replay_detected');
    assert.equal(again.body.error, 'Replay request detected');
  });
  it('does not burn a nonce on a forged signature', async () => {
    const { creds } = ctx();
    const ts = String(now());
    const nonce = `forged-${Date.now()}-${Math.random()}`;
    await expect401(send(creds, { timestamp: ts, nonce, sign: '0'.repeat(64) }), 'invalid_signature');
    const real = await send(creds, { timestamp: ts, nonce });
    assert.notEqual(real.status, 401, real.text);
  });
}
