// Shared by the admin API suites (admin.test.ts, admin-accounts.test.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { fakeChain, type TestResponse, type TestServer } from '../helpers/server.ts';

export const USDC = fakeChain().tokens[0]!;
export const WALLET_CHECKSUM = '0x8626f6940E2eb28930eFb4CeF49B2d1F2C9C1199';
export const WALLET = WALLET_CHECKSUM.toLowerCase();

/** A unique merchant id per test (the server is shared within a backend). */
export function uniqueId(prefix = 'm'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Asserts an error envelope: status, code, optional param, request id matching the header. */
export function assertError(r: TestResponse, status: number, code: string, param?: string) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body.code, code, r.text);
  assert.equal(typeof r.body.error, 'string');
  assert.ok(r.body.error.length > 0);
  assert.match(r.body.request_id, /^req_/);
  assert.equal(r.headers.get('x-request-id'), r.body.request_id);
  if (param !== undefined) assert.equal(r.body.param, param, r.text);
  const allowed = new Set(['error', 'code', 'param', 'request_id']);
  for (const k of Object.keys(r.body)) assert.ok(allowed.has(k), `unexpected envelope field ${k}`);
}

export async function count(server: TestServer, table: string): Promise<number> {
  const { rows } = await server.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]!.n;
}
