// Revert data → words (settlement/revert-reason.ts): an adapter's custom error by the adapter's ABI,
// else by selector against the shipped contracts' errors, else the raw selector.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeErrorResult, parseAbi } from 'viem';
import { ExampleCreditAdapterArtifact } from '@tollgate/contracts';
import { describeRevertData } from '../../src/settlement/revert-reason.ts';

describe('describeRevertData', () => {
  it('decodes a known error with its arguments, an unknown one with the adapter ABI, else names the selector', () => {
    const orderId = `0x${'11'.repeat(32)}` as const;
    assert.equal(describeRevertData(encodeErrorResult({ abi: ExampleCreditAdapterArtifact.abi, errorName: 'OrderAlreadyCredited', args: [orderId] })), `OrderAlreadyCredited(bytes32 ${orderId})`);
    assert.equal(describeRevertData(encodeErrorResult({ abi: ExampleCreditAdapterArtifact.abi, errorName: 'AmountNotReceived', args: [5n, 3n] })), 'AmountNotReceived(uint256 5, uint256 3)');
    const custom = parseAbi(['error InvalidAccount(bytes32 account)']);
    const data = encodeErrorResult({ abi: custom, errorName: 'InvalidAccount', args: [orderId] });
    assert.equal(describeRevertData(data, custom), `InvalidAccount(bytes32 ${orderId})`, 'with the adapter ABI');
    assert.equal(describeRevertData(data), `error ${data.slice(0, 10)} (unknown selector, 36 bytes)`, 'without it: the selector');
    assert.equal(describeRevertData(encodeErrorResult({ abi: parseAbi(['error Error(string)']), errorName: 'Error', args: ['sold out'] })), 'Error(string "sold out")');
    assert.equal(describeRevertData('0x'), 'no reason (empty revert data)');
  });
});
