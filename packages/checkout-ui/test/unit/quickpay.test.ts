import assert from 'node:assert/strict';
import { test } from 'node:test';
import { amountProblem, idempotencyKey, linkIdFromPath, sessionIdFromHash } from '../../src/lib/quickpay.ts';

test('amountProblem: decimal strings compared as scaled integers', () => {
  assert.equal(amountProblem('12.34', '1', '20'), undefined);
  assert.equal(amountProblem(' 20.000000 ', '1', '20'), undefined);
  assert.match(amountProblem('20.000001', '1', '20')!, /between 1 and 20/);
  assert.match(amountProblem('0.999999', '1', '20')!, /between/);
  for (const bad of ['', 'abc', '1e3', '1.2345678', '-1', '0x10']) assert.ok(amountProblem(bad, '1', '20'), bad);
  assert.match(amountProblem('0', '0.000001', '1')!, /above zero/);
});

test('idempotencyKey: same inputs, same key; any change, another key; at most 128 printable ASCII', () => {
  const a = idempotencyKey('abcd', { amount: '1', memo: 'x' });
  assert.equal(a, idempotencyKey('abcd', { amount: '1', memo: 'x' }));
  assert.notEqual(a, idempotencyKey('abcd', { amount: '1', memo: 'y' }));
  assert.notEqual(a, idempotencyKey('efgh', { amount: '1', memo: 'x' }));
  assert.match(a, /^[\x21-\x7e]{1,128}$/);
});

test('link id from the path, session id from the fragment', () => {
  assert.equal(linkIdFromPath('/quickpay/pay/pl_9xAb'), 'pl_9xAb');
  assert.equal(linkIdFromPath('/prefix/quickpay/pay/pl_9xAb/'), 'pl_9xAb');
  assert.equal(linkIdFromPath('/quickpay/pay/cs_9x'), undefined);
  assert.equal(sessionIdFromHash('#qps_Abc'), 'qps_Abc');
  assert.equal(sessionIdFromHash('#qps_<x>'), undefined);
});
