import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, checkoutApi, checkoutIdFromHash, logoSrc, successRedirect } from '../../src/lib/api.ts';

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

test('checkoutApi: relative to the page URL; the fragment never goes out', async () => {
  const seen: { url: string; init?: RequestInit }[] = [];
  const api = checkoutApi('https://pay.example/base/checkout/pay#cs_abc', 'cs_abc', async (url, init) => {
    seen.push({ url, ...(init ? { init } : {}) });
    return json(200, url.endsWith('/bind') ? { order_id: 'ord_1' } : { status: 'OPEN' });
  });
  await api.session();
  await api.status();
  await api.bind({ chain_id: 1, token_symbol: 'USDC', from_address: '0x' + '1'.repeat(40) });
  assert.deepEqual(
    seen.map((s) => s.url),
    ['https://pay.example/base/checkout/v1/sessions/cs_abc', 'https://pay.example/base/checkout/v1/sessions/cs_abc/status', 'https://pay.example/base/checkout/v1/sessions/cs_abc/bind'],
  );
  assert.equal(seen[2]!.init?.method, 'POST');
  assert.deepEqual(JSON.parse(String(seen[2]!.init?.body)), { chain_id: 1, token_symbol: 'USDC', from_address: '0x' + '1'.repeat(40) });
  assert.equal(seen[0]!.init?.credentials, 'omit');
});

test('checkoutApi: error envelope → ApiError with status, code, message, Retry-After', async () => {
  const answers = [
    json(409, { error: 'already bound', code: 'session_already_bound', request_id: 'req_1' }),
    json(429, { error: 'slow down', code: 'rate_limited', request_id: 'req_2' }, { 'retry-after': '7' }),
    new Response('<html>bad gateway</html>', { status: 502 }),
  ];
  const api = checkoutApi('https://pay.example/checkout/pay', 'cs_x', async () => answers.shift()!);
  await assert.rejects(api.session(), (e: unknown) => e instanceof ApiError && e.status === 409 && e.code === 'session_already_bound' && e.message === 'already bound');
  await assert.rejects(api.status(), (e: unknown) => e instanceof ApiError && e.status === 429 && e.retryAfter === 7);
  await assert.rejects(api.status(), (e: unknown) => e instanceof ApiError && e.status === 502 && e.code === 'http_502');
  const down = checkoutApi('https://pay.example/checkout/pay', 'cs_x', async () => {
    throw new TypeError('fetch failed');
  });
  await assert.rejects(down.status(), (e: unknown) => e instanceof ApiError && e.status === 0 && e.code === 'network_error');
});

test('checkoutApi: clock offset from the Date header', async () => {
  const ahead = new Date(Date.now() + 120_000).toUTCString();
  const api = checkoutApi('https://pay.example/checkout/pay', 'cs_x', async () => json(200, { status: 'OPEN' }, { date: ahead }));
  assert.equal(api.clockOffset, 0);
  await api.status();
  assert.ok(Math.abs(api.clockOffset - 120_000) < 2000, String(api.clockOffset));
});

test('checkoutIdFromHash', () => {
  assert.equal(checkoutIdFromHash('#cs_AbC-12_x'), 'cs_AbC-12_x');
  assert.equal(checkoutIdFromHash('cs_1'), 'cs_1');
  for (const bad of ['', '#', '#cs 1', '#<script>', '#../x', `#${'a'.repeat(201)}`]) assert.equal(checkoutIdFromHash(bad), undefined, bad);
});

test('successRedirect: checkout_id appended, other params kept, only http(s)', () => {
  assert.equal(successRedirect('https://shop.example/thanks?order=7', 'cs_1'), 'https://shop.example/thanks?order=7&checkout_id=cs_1');
  assert.equal(successRedirect('https://shop.example/thanks?checkout_id=old', 'cs_1'), 'https://shop.example/thanks?checkout_id=cs_1');
  assert.equal(successRedirect('https://shop.example/t#frag', 'cs_1'), 'https://shop.example/t?checkout_id=cs_1#frag');
  assert.equal(successRedirect('javascript:alert(1)', 'cs_1'), undefined);
  assert.equal(successRedirect(undefined, 'cs_1'), undefined);
  assert.equal(successRedirect('not a url', 'cs_1'), undefined);
});

test('logoSrc: https or same origin only', () => {
  const page = 'https://pay.example';
  assert.equal(logoSrc('https://cdn.shop.example/l.png', page), 'https://cdn.shop.example/l.png');
  assert.equal(logoSrc('/static/l.png', page), 'https://pay.example/static/l.png');
  assert.equal(logoSrc('http://shop.example/l.png', page), undefined);
  assert.equal(logoSrc('data:image/png;base64,AAAA', page), undefined);
  assert.equal(logoSrc('javascript:alert(1)', page), undefined);
  assert.equal(logoSrc(undefined, page), undefined);
  // a plain-http deployment (local dev) may still serve its own logo
  assert.equal(logoSrc('http://127.0.0.1:8402/logo.png', 'http://127.0.0.1:8402'), 'http://127.0.0.1:8402/logo.png');
});
