import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildEip681Transfer } from '../../src/lib/eip681.ts';
import { isAddress, normalizeAddress, shortAddress } from '../../src/lib/address.ts';

const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const PAY_TO = '0xA0Ee7A142d267C1f36714E4a8F75612F20a79720';

test('buildEip681Transfer: ethereum:<token>@<chainId>/transfer?address=<payTo>&uint256=<amount>', () => {
  assert.equal(buildEip681Transfer({ tokenContract: TOKEN, chainId: 137, payTo: PAY_TO, amountWei: '9990000' }), 'ethereum:0x5fbdb2315678afecb367f032d93f642f64180aa3@137/transfer?address=0xa0ee7a142d267c1f36714e4a8f75612f20a79720&uint256=9990000');
});

test('buildEip681Transfer: exact big integers, no exponent, no leading zeros', () => {
  const big = '115792089237316195423570985008687907853269984665640564039457584007913129639935';
  assert.ok(buildEip681Transfer({ tokenContract: TOKEN, chainId: 1, payTo: PAY_TO, amountWei: big }).endsWith(`&uint256=${big}`));
  assert.ok(buildEip681Transfer({ tokenContract: TOKEN, chainId: 1, payTo: PAY_TO, amountWei: '000100' }).endsWith('&uint256=100'));
});

test('buildEip681Transfer rejects bad input', () => {
  const ok = { tokenContract: TOKEN, chainId: 1, payTo: PAY_TO, amountWei: '1' };
  assert.throws(() => buildEip681Transfer({ ...ok, tokenContract: '0x123' }), TypeError);
  assert.throws(() => buildEip681Transfer({ ...ok, payTo: 'vitalik.eth' }), TypeError);
  assert.throws(() => buildEip681Transfer({ ...ok, chainId: 0 }), RangeError);
  assert.throws(() => buildEip681Transfer({ ...ok, chainId: 1.5 }), RangeError);
  assert.throws(() => buildEip681Transfer({ ...ok, amountWei: '1.5' }), RangeError);
  assert.throws(() => buildEip681Transfer({ ...ok, amountWei: '2.5e6' }), RangeError);
});

test('address validation: 0x + 40 hex, any case; normalized lowercase and trimmed', () => {
  assert.equal(isAddress(PAY_TO), true);
  assert.equal(isAddress(PAY_TO.toLowerCase()), true);
  for (const bad of ['', '0x', PAY_TO.slice(0, 41), PAY_TO + '0', PAY_TO.replace('0x', ''), PAY_TO.replace('A', 'g'), `0X${PAY_TO.slice(2)}`, 42]) assert.equal(isAddress(bad), false, String(bad));
  assert.equal(normalizeAddress(`  ${PAY_TO}\n`), PAY_TO.toLowerCase());
  assert.equal(normalizeAddress('0xnope'), undefined);
  assert.equal(shortAddress(PAY_TO), '0xA0Ee…9720');
});
