// Pure pieces of issue 12's hardening: the time-input parser, the logged URL, the logged error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logSafeError } from '../../src/db/log-safe.ts';
import { redactPath } from '../../src/http/app.ts';
import { parseRfc3339 } from '../../src/http/time.ts';

test('parseRfc3339: offsets, fractions, calendar and range', () => {
  assert.equal(parseRfc3339('2025-01-31T12:00:00+01:00')?.toISOString(), '2025-01-31T11:00:00.000Z');
  assert.equal(parseRfc3339('2025-01-31T12:00:00.25z')?.toISOString(), '2025-01-31T12:00:00.250Z');
  assert.equal(parseRfc3339('1970-01-01T00:00:00Z')?.getTime(), 0);
  assert.equal(parseRfc3339('9999-12-31T23:59:59Z')?.toISOString(), '9999-12-31T23:59:59.000Z');
  assert.equal(parseRfc3339('2024-02-29T00:00:00Z')?.toISOString(), '2024-02-29T00:00:00.000Z');
  for (const bad of [
    '0000-01-01T00:00:00Z',
    '0099-01-01T00:00:00Z',
    '1969-12-31T23:59:59Z',
    '1970-01-01T00:30:00+01:00',
    '9999-12-31T23:59:59-00:01',
    '2025-02-29T00:00:00Z',
    '2025-02-30T00:00:00Z',
    '2025-13-01T00:00:00Z',
    '2025-01-01T24:00:00Z',
    '2025-01-01T00:60:00Z',
    '2025-01-01T00:00:60Z',
    '2025-01-01T00:00:00+24:00',
    '+275760-09-13T00:00:00Z',
    '2025-01-01',
    '2025-01-01T00:00:00',
    ' 2025-01-01T00:00:00Z',
  ]) {
    assert.equal(parseRfc3339(bad), undefined, bad);
  }
});

test('redactPath keeps query names, never values; checkout ids anywhere', () => {
  assert.equal(redactPath('/api/v1/merchant'), '/api/v1/merchant');
  assert.equal(redactPath('/x?token=secret-admin&b=&c'), '/x?token=[redacted]&b=[redacted]&c');
  assert.equal(redactPath('/checkout/v1/sessions/cs_abc?cs_def=1'), '/checkout/v1/sessions/cs_[redacted]?cs_[redacted]=[redacted]');
  // Quick-pay session ids read a session's status and pay its card checkout: capabilities too.
  assert.equal(redactPath('/quickpay/v1/sessions/qps_7Gx2-a/card/test-payment?qps_x'), '/quickpay/v1/sessions/qps_[redacted]/card/test-payment?qps_[redacted]');
  assert.equal(redactPath(`/x?${'s'.repeat(41)}`), '/x?[redacted]');
  assert.equal(redactPath('/x?a=1?b=2'), '/x?a=[redacted]');
});

test('logSafeError: a database error by structure only; others without quoted values', () => {
  const pg = Object.assign(new Error('duplicate key value violates unique constraint "checkout_sessions_ref"'), {
    code: '23505',
    severity: 'ERROR',
    table: 'checkout_sessions',
    constraint: 'checkout_sessions_ref',
    detail: 'Key (client_reference_id)=(alice@example.com) already exists.',
    where: 'JSON data, line 1: {"email":"alice@example.com"',
    query: 'INSERT … VALUES ($1)',
    params: ['alice@example.com'],
    routine: '_bt_check_unique',
  });
  assert.deepEqual(logSafeError(pg), { type: 'DatabaseError', sqlstate: '23505', severity: 'ERROR', table: 'checkout_sessions', constraint: 'checkout_sessions_ref', routine: '_bt_check_unique' });
  const missing = Object.assign(new Error('relation "orders" does not exist'), { code: '42P01' });
  assert.equal(logSafeError(missing).message, 'relation "orders" does not exist');
  const js = logSafeError(new SyntaxError('Unexpected token "alice@example.com" in JSON'));
  assert.equal(js.type, 'SyntaxError');
  assert.equal(js.message, 'Unexpected token "…" in JSON');
  assert.ok(!JSON.stringify(js).includes('alice'));
  assert.deepEqual(logSafeError(undefined), { type: 'undefined' });
});
