// Generators and raw-HTTP plumbing of the route fuzzer (fuzz-routes.test.ts): the suite's knobs,
// a node:http client that sends bytes exactly as given, the table snapshot behind "a rejected
// request writes nothing", and the fast-check arbitraries for bodies, headers, queries and paths.
import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import type { RouteDef } from '../../src/http/route.ts';
import { buildOrderBody, MERCHANT_WALLET, PAYER } from '../helpers/orders.ts';
import type { TestServer } from '../helpers/server.ts';

// The suite's knobs, read once (test-only settings; the server reads its environment in config/).
export const LONG = process.env.TOLLGATE_LONG === '1';
export const RUNS = Number(process.env.FUZZ_RUNS ?? (LONG ? 1000 : 100));
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
export const fcParams = (numRuns: number): fc.Parameters<unknown> => ({ numRuns, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true });

// ---------------------------------------------------------------------------------------------
// Raw HTTP: node:http (not fetch) so a test can send any header value node allows, any body bytes
// and any content type, exactly as given.

export interface Raw {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
}
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export function send(base: string, r: Raw): Promise<Answer> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method: r.method, path: r.path, headers: { ...r.headers, ...(r.body !== undefined ? { 'content-length': String(Buffer.byteLength(r.body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`no answer in 15 s to ${r.method} ${r.path}`)));
    req.on('error', reject);
    if (r.body !== undefined) req.write(r.body);
    req.end();
  });
}

// ---------------------------------------------------------------------------------------------
// Database snapshot, one round trip: per table the row count and the newest row version (max xmin).
// An INSERT or UPDATE creates a row version with a transaction id above every earlier one, a DELETE
// lowers the count; a rolled-back write leaves no visible version, which is the point: it wrote
// nothing. request_nonces is excluded: a signed request may consume its nonce by design.

export const TABLES = [
  'merchants',
  'api_keys',
  'merchant_wallets',
  'fee_accounts',
  'fee_ledger',
  'orders',
  'order_transitions',
  'chain_transfers',
  'chain_cursors',
  'chain_leases',
  'webhook_endpoints',
  'webhook_events',
  'webhook_deliveries',
  'webhook_attempts',
  'checkout_sessions',
  'checkout_transitions',
  'quickpay_products',
  'quickpay_links',
  'quickpay_sessions',
] as const;
const SNAPSHOT_SQL = 'SELECT ' + TABLES.map((t) => `(SELECT count(*)::text || ':' || coalesce(max(xmin::text::bigint), 0)::text FROM ${t}) AS ${t}`).join(', ');

export async function snapshot(s: TestServer): Promise<Record<string, string>> {
  const { rows } = await s.db.query<Record<string, string>>(SNAPSHOT_SQL);
  return rows[0]!;
}

/**
 * A write counter for the cheap first check: a statement-level trigger on every table of TABLES
 * (BEFORE INSERT, UPDATE, DELETE or TRUNCATE, so it fires even for a statement that then fails or
 * changes no row) takes a number from a sequence, and sequences are never rolled back. While the
 * counter is unchanged, no statement that could write ran on those tables and the snapshot above
 * cannot differ. The cluster's next transaction id, the check before this one, moved for every
 * signed request (its nonce goes to request_nonces, which has no trigger here) and, on a PostgreSQL
 * server shared with other test files, for their writes too: each such move cost a snapshot.
 * Test-only objects in the test's own database; the gateway never reads them.
 */
export async function installWriteCounter(s: TestServer): Promise<void> {
  await s.db.exec(
    [
      'CREATE SEQUENCE fuzz_write_statements',
      "CREATE FUNCTION fuzz_count_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('fuzz_write_statements'); RETURN NULL; END $$",
      ...TABLES.map((t) => `CREATE TRIGGER fuzz_count_write BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${t} FOR EACH STATEMENT EXECUTE FUNCTION fuzz_count_write()`),
    ].join(';\n'),
  );
}

/** The write counter's value (is_called too: the first nextval leaves last_value at 1). */
export async function writeCount(s: TestServer): Promise<string> {
  const { rows } = await s.db.query<{ x: string }>("SELECT last_value::text || ':' || is_called::text AS x FROM fuzz_write_statements");
  return rows[0]!.x;
}

// ---------------------------------------------------------------------------------------------
// Hostile values.

/** encodeURIComponent that also takes lone surrogates (as their UTF-8 replacement character). */
export function pct(v: string): string {
  return [...Buffer.from(v, 'utf8')].map((b) => (/[A-Za-z0-9\-_.!~*'()]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

export function nest(depth: number, leaf: unknown): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

const weirdStrings = fc.constantFrom(
  '',
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\u0000',
  '\u200b',
  '\ufeff',
  '\ud800',
  'NaN',
  'Infinity',
  '-Infinity',
  'undefined',
  'null',
  'true',
  'false',
  '-0',
  '0',
  '-1',
  '00',
  '01',
  '1e18',
  '1E400',
  '0x10',
  '0b1',
  '1_000',
  ' 1 ',
  '\t1\n',
  '１２３',
  '١٢٣',
  '1.',
  '.5',
  '1.0',
  '-0.0',
  '+1',
  '9'.repeat(77),
  '9'.repeat(78),
  '1'.repeat(79),
  '1' + '0'.repeat(100),
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '{"a":1}',
  '[]',
  "' OR 1=1 --",
  "'; DROP TABLE orders; --",
  '$1',
  '%s%n',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '\\',
  '"',
  '😀'.repeat(50),
  'Ω≈ç√∫',
  'ß'.toUpperCase(),
  'İ',
  'a\u0301',
  '0x' + 'f'.repeat(40),
  '0x' + '0'.repeat(40),
  '0X70997970C51812DC3A010C7D01B50E0D17DC79C8',
  PAYER.toUpperCase(),
  'USDC',
  'usdc',
  'USDC ',
  'DIRECT',
  'DELEGATE',
  'https://',
  'http://127.0.0.1/',
  'javascript:alert(1)',
  'https://example.com/?q=1#f',
  '2026-11-21T00:00:00Z',
  '0000-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z',
);

/** Characters PostgreSQL text/jsonb refuse or that are easy to mishandle: NUL, C0/C1 controls, lone surrogates, line separators. */
const controlChar = fc.constantFrom('\u0000', '\u0001', '\u0008', '\u001b', '\u001f', '\u007f', '\u0085', '\ud800', '\udbff', '\udc00', '\u2028', '\ufffe', 'a', ' ');
const controlString = fc.string({ unit: controlChar, minLength: 1, maxLength: 6 });

/**
 * The text of a `*_json` field whose DECODED strings or keys hold control characters: the raw field
 * is plain escapes (`\\u0000`), so only a server that validates the decoded JSON refuses it before
 * the database does (issue 12: an escaped NUL in private_metadata_json was a 500).
 */
const jsonFieldWithControls: fc.Arbitrary<string> = fc.oneof(
  fc.dictionary(fc.oneof(controlString, fc.constantFrom('note', 'email')), fc.oneof(controlString, fc.integer()), { minKeys: 1, maxKeys: 3 }).map((o) => JSON.stringify(o)),
  fc.array(fc.record({ name: controlString, quantity: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 3 }).map((a) => JSON.stringify(a)),
  fc.constantFrom('{"note":"gift\\u0000wrap"}', '{"\\u0000":"x"}', '[{"name":"\\ud800","quantity":1}]', '{"a":"\\udc00"}', '{"a":"\\u001f\\u007f"}', '[{"name":"Tea\\u0000","quantity":1,"amount":"9.99"}]'),
);

/** RFC 3339-looking times at and beyond the edges of what JavaScript and the databases can hold. */
const extremeDates: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00Z',
    '1969-12-31T23:59:59Z',
    '1970-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '9999-12-31T23:59:59-23:59',
    '-000001-01-01T00:00:00Z',
    '+275760-09-13T00:00:00Z',
    '+275760-09-13T00:00:00.001Z',
    '2026-02-30T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T00:00:60Z',
    '2026-01-01T00:00:00+99:99',
    '2026-01-01T00:00:00.1234567890123Z',
    '4714-11-24T00:00:00Z BC',
  ),
  fc.integer({ min: 0, max: 9999 }).map((y) => `${String(y).padStart(4, '0')}-01-01T00:00:00Z`),
  fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }).map((d) => d.toISOString()),
);

/** A JSON body nested `depth` levels, as text (JSON.stringify itself overflows around 10,000). */
const deepBodyText = (depth: number) => `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: jsonFieldWithControls, weight: 3 },
  { arbitrary: extremeDates, weight: 2 },
  { arbitrary: weirdStrings, weight: 6 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 70_000 }).map((n) => 'x'.repeat(n)), weight: 1 },
  { arbitrary: fc.integer({ min: 1, max: 120 }).map((n) => '9'.repeat(n)), weight: 2 },
  { arbitrary: fc.bigInt({ min: -(10n ** 90n), max: 10n ** 90n }).map(String), weight: 2 },
  { arbitrary: fc.integer(), weight: 2 },
  { arbitrary: fc.constantFrom(0, -0, -1, 1.5, 1e21, -1e21, 2 ** 53, 2 ** 53 + 2, Number.MAX_VALUE, Number.MIN_VALUE, 31337, 1e308), weight: 2 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: fc.constantFrom(null, true, false, [], {}, [null], ['USDC'], [31337], { $gt: '' }, { __proto__: null }), weight: 3 },
  { arbitrary: fc.array(fc.string({ maxLength: 8 }), { maxLength: 5 }), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 3000 }).map((d) => nest(d, 'deep')), weight: 1 },
);

const keyArb = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'sign', 'api_key', 'nonce', 'timestamp', '', ' ', 'merchant_id', 'amount_wei', 'chain_id', '😀', 'a'.repeat(300)), fc.string({ maxLength: 12 }));

/** A valid body per route (so mutations reach the handler), with ids filled from the fixture. */
export function validBody(route: RouteDef<any, any, any>, chainId: number): Record<string, unknown> | undefined {
  switch (`${route.method} ${route.url}`) {
    case 'POST /api/v1/orders':
      return buildOrderBody({ chain_id: chainId });
    case 'POST /api/v1/orders/:order_id/cancel':
      return {};
    case 'POST /api/v1/checkout/sessions':
      // With the *_json fields, so the fuzzer mutates them too (their decoded JSON is stored).
      return {
        checkout_type: 'DIRECT',
        price: '9.99',
        client_reference_id: `c-${Math.random()}`,
        line_items_json: '[{"name":"Tea","quantity":1,"amount":"9.99"}]',
        public_metadata_json: '{"note":"n"}',
        private_metadata_json: '{"email":"e"}',
      };
    case 'POST /checkout/v1/sessions/:checkout_id/bind':
      return { chain_id: chainId, token_symbol: 'USDC', from_address: PAYER };
    case 'POST /admin/v1/merchants':
      return { name: 'Fuzz', receive_type: 'DIRECT', return_urls: ['https://shop.example/'] };
    case 'POST /admin/v1/merchants/:merchant_id/wallets':
      return { chain_id: chainId, token_symbol: 'USDT', address: MERCHANT_WALLET };
    case 'POST /admin/v1/merchants/:merchant_id/fee-balance/top-ups':
      return { amount: '1.00' };
    case 'POST /admin/v1/merchants/:merchant_id/card-rail':
      return { enabled: true };
    case 'PUT /admin/v1/merchants/:merchant_id/return-urls':
      return { return_urls: ['https://shop.example/'] };
    case 'PUT /admin/v1/merchants/:merchant_id/underpayment-tolerance':
      return { underpay_tolerance_bps: 50 };
    case 'POST /api/v1/products':
    case 'POST /admin/v1/merchants/:merchant_id/products':
      return { name: 'Fuzz beans', description: 'd', image_url: 'https://shop.example/i.png', price: '2.50', inventory: 100 };
    case 'POST /api/v1/products/:product_id':
      return { name: 'Fuzz beans 2', price: '2.75' };
    case 'POST /api/v1/payment-links':
    case 'POST /admin/v1/merchants/:merchant_id/payment-links':
      return { min_amount: '1', max_amount: '50', options: `${chainId}:USDC`, max_payments: 1000 };
    case 'POST /api/v1/payment-links/:link_id':
      return { active: true, max_payments: 1000 };
    case 'POST /quickpay/v1/links/:link_id/sessions':
      return { chain_id: chainId, token_symbol: 'USDC', from_address: PAYER, amount: `1.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`, memo: 'm', idempotency_key: `k-${Math.random()}` };
    case 'POST /admin/v1/merchants/:merchant_id/webhooks':
      return { url: 'http://127.0.0.1:9/hook', events: ['order.invoiced'] };
    case 'POST /admin/v1/merchants/:merchant_id/webhooks/:webhook_id/rotate-secret':
      return { overlap_seconds: 0 };
    case 'POST /admin/v1/merchants/:merchant_id/webhooks/trigger':
      return { event: 'order.invoiced' };
    case 'POST /admin/v1/merchants/:merchant_id/webhook-deliveries/redeliver':
      return { since: '2020-01-01T00:00:00Z' };
  }
  return route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
}

export interface BodyCase {
  /** What is sent; undefined: no body. */
  text: string | undefined;
  contentType: string | undefined;
}

const contentTypes = fc.constantFrom(
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/octet-stream',
  undefined,
);

export function bodyArb(valid: Record<string, unknown> | undefined): fc.Arbitrary<BodyCase> {
  const base = valid ?? {};
  const keys = Object.keys(base);
  const json = (o: unknown) => JSON.stringify(o) ?? 'null';
  const asJson = (a: fc.Arbitrary<string>) => fc.tuple(a, fc.constantFrom('application/json', 'application/json', 'application/json; charset=utf-8')).map(([text, contentType]) => ({ text, contentType }));
  const entries = Object.entries(base);
  return fc.oneof(
    // one field replaced by a hostile value (own data property even for __proto__)
    { arbitrary: asJson(fc.tuple(keys.length ? fc.oneof(fc.constantFrom(...keys), keyArb) : keyArb, hostileValue).map(([k, v]) => json(Object.fromEntries([...entries.filter(([x]) => x !== k), [k, v]])))), weight: 8 },
    // several fields replaced
    { arbitrary: asJson(fc.dictionary(keys.length ? fc.constantFrom(...keys) : keyArb, hostileValue, { maxKeys: 4 }).map((d) => json({ ...base, ...d }))), weight: 3 },
    // a field dropped, or the valid body as is (accepted paths get exercised too)
    { arbitrary: asJson(fc.nat().map((i) => json(keys.length ? Object.fromEntries(entries.filter((_, j) => j !== i % (keys.length + 1))) : base))), weight: 2 },
    // prototype keys, spelled out in the JSON text
    { arbitrary: asJson(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), hostileValue).map(([k, v]) => json(base).replace(/^\{/, `{${JSON.stringify(k)}:${json(v)}${keys.length ? ',' : ''}`))), weight: 2 },
    // an arbitrary JSON document (array, string, number, deep nesting, …)
    { arbitrary: asJson(fc.oneof(hostileValue, fc.jsonValue()).map(json)), weight: 2 },
    // not JSON at all, or JSON with a bad content type
    {
      arbitrary: fc.record({
        text: fc.oneof(fc.constantFrom('', '{', '}', '{"a":', '[', 'nul', '\ufeff{}', '{}{}', '{"a":1,}', "{'a':1}", 'a=1&b=2', '{"a":1e99999}', '"\\ud800"', '{"__proto__":{"x":1}}', '\u0000'), fc.string({ maxLength: 60 }), fc.constant(json(base))),
        contentType: contentTypes,
      }),
      weight: 3,
    },
    // nesting far beyond the 32-level bound, up to 20,000 (a stack overflow once: issue 12)
    { arbitrary: asJson(fc.integer({ min: 30, max: 20_000 }).map(deepBodyText)), weight: 1 },
    { arbitrary: fc.constant<BodyCase>({ text: undefined, contentType: undefined }), weight: 1 },
  );
}

/** Header-safe garbage (node refuses CR/LF/NUL and code points above 0xFF in header values). */
export const headerValue = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 200 }),
  fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
  fc.integer({ min: 0, max: 300 }).map((n) => 'a'.repeat(n)),
  fc.constantFrom('', ' ', '0', '-1', '99999999999999999999', '1e10', 'null', 'Bearer', 'Bearer ', 'sha256=abc', 'f'.repeat(64), 'F'.repeat(64), '\t'),
);

// Query: pairs of names and values, sometimes repeated names, sometimes raw (badly encoded) text.
export const queryArb = fc.oneof(
  { arbitrary: fc.constant(''), weight: 3 },
  {
    arbitrary: fc
      .array(fc.tuple(fc.oneof(keyArb, fc.constantFrom('limit', 'status', 'event', 'after', 'before', 'order_id', 'probe')), fc.oneof(fc.string({ maxLength: 20 }), weirdStrings)), { maxLength: 4 })
      .map((pairs) => pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&')),
    weight: 3,
  },
  { arbitrary: fc.constantFrom('a=1&a=2', '%zz=1', 'a=%', '=', '&&&', 'a', '__proto__=1', 'constructor[prototype][x]=1', 'a[]=1', '+=+', 'limit=-1', 'limit=99999999999999999999', 'wait=abc'), weight: 2 },
);

export const segArb = fc.oneof(
  fc.string({ maxLength: 30 }),
  weirdStrings,
  fc.integer({ min: 65, max: 400 }).map((n) => 'z'.repeat(n)),
);

// ---------------------------------------------------------------------------------------------
