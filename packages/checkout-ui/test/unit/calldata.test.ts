import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeErc20Transfer, ERC20_TRANSFER_SELECTOR, toHexChainId } from '../../src/lib/calldata.ts';

// Expected values from viem's encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', … }).
test('encodeErc20Transfer matches the ABI encoding of transfer(address,uint256)', () => {
  assert.equal(ERC20_TRANSFER_SELECTOR, '0xa9059cbb');
  assert.equal(encodeErc20Transfer('0xa0Ee7A142d267C1f36714E4a8F75612F20a79720', 9_990_000n), '0xa9059cbb000000000000000000000000a0ee7a142d267c1f36714e4a8f75612f20a797200000000000000000000000000000000000000000000000000000000000986f70');
  assert.equal(encodeErc20Transfer('0x0000000000000000000000000000000000000001', ((1n << 256n) - 1n).toString()), '0xa9059cbb0000000000000000000000000000000000000000000000000000000000000001ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff');
});

test('encodeErc20Transfer: 4 + 32 + 32 bytes, string and bigint amounts agree', () => {
  const a = encodeErc20Transfer('0x' + '11'.repeat(20), '1000000');
  assert.equal(a.length, 2 + 2 * (4 + 32 + 32));
  assert.equal(a, encodeErc20Transfer('0x' + '11'.repeat(20), 1_000_000n));
  assert.ok(a.endsWith('f4240'));
});

test('encodeErc20Transfer rejects bad input', () => {
  assert.throws(() => encodeErc20Transfer('0x12', 1n), TypeError);
  assert.throws(() => encodeErc20Transfer('0x' + '11'.repeat(20), -1n), RangeError);
  assert.throws(() => encodeErc20Transfer('0x' + '11'.repeat(20), 1n << 256n), RangeError);
  assert.throws(() => encodeErc20Transfer('0x' + '11'.repeat(20), '1.5'), RangeError);
  assert.throws(() => encodeErc20Transfer('0x' + '11'.repeat(20), '-1'), RangeError);
});

test('toHexChainId', () => {
  assert.equal(toHexChainId(1), '0x1');
  assert.equal(toHexChainId(137), '0x89');
  assert.equal(toHexChainId(31337), '0x7a69');
});
