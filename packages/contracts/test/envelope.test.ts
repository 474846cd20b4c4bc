// envelope.ts without a chain: the signing request has the wire shape and signs with viem as is,
// the envelope round-trips, bounds are enforced, and the typehash string matches the contracts'.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hashTypedData, keccak256, recoverTypedDataAddress, toBytes, toHex, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { EIP3009_CALLBACK_DATA_TYPES, TollgateSettlementArtifact, NO_CALLBACK_DATA, buildCalldataSignRequest, callbackDataFor, decodeCallbackEnvelope, encodeCallbackEnvelope, orderIdToBytes32, toSignableTypedData } from '../src/index.ts';

const payer = privateKeyToAccount(generatePrivateKey());
const input = {
  chainId: 31337,
  callbackContract: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
  eip712Name: 'Tollgate Example Credit',
  eip712Version: '1',
  token: '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512',
  spentAddress: '0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0',
  payer: payer.address,
  amount: 12_500_000n,
  orderId: 'ord_9f2c1a7b',
  calldataNonce: 7n,
  deadline: 1_900_000_000n,
  calldata: '0xdeadbeef',
} as const;

describe('buildCalldataSignRequest', () => {
  test('a complete EIP-712 object: domain of the callback contract, EIP712Domain in types, string message values', () => {
    const req = buildCalldataSignRequest(input);
    assert.deepEqual(req.domain, { name: 'Tollgate Example Credit', version: '1', chainId: 31337, verifyingContract: '0x5FbDB2315678afecb367f032d93F642f64180aa3' });
    assert.equal(req.primaryType, 'Eip3009CallbackData');
    assert.deepEqual(Object.keys(req.types).sort(), ['EIP712Domain', 'Eip3009CallbackData']);
    assert.deepEqual(
      req.types.Eip3009CallbackData.map((f) => f.name),
      ['token', 'owner', 'payer', 'amount', 'orderId', 'calldataNonce', 'deadline', 'calldataHash'],
    );
    assert.deepEqual(req.message, {
      token: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
      owner: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
      payer: payer.address,
      amount: '12500000',
      orderId: keccak256(toBytes('ord_9f2c1a7b')),
      calldataNonce: '7',
      deadline: '1900000000',
      calldataHash: keccak256('0xdeadbeef'),
    });
  });

  test('signed through toSignableTypedData, the signature recovers to the payer; the wire JSON has the same digest', async () => {
    const req = toSignableTypedData(buildCalldataSignRequest(input));
    const signature = await payer.signTypedData(req);
    assert.equal(await recoverTypedDataAddress({ ...req, signature }), payer.address);
    // The wire JSON (strings, EIP712Domain listed) hashes to the same digest, as eth_signTypedData_v4 would.
    const wire = JSON.parse(JSON.stringify(buildCalldataSignRequest(input)));
    assert.equal(hashTypedData(wire), hashTypedData(req));
    // Changing any bound field changes the digest.
    const other = toSignableTypedData(buildCalldataSignRequest({ ...input, calldata: '0xdeadbeee' }));
    assert.notEqual(hashTypedData(other), hashTypedData(req));
  });

  test('the struct string hashes to the settlement contract’s EIP3009_CALLBACK_DATA_TYPEHASH', () => {
    const fields = EIP3009_CALLBACK_DATA_TYPES.Eip3009CallbackData.map((f) => `${f.type} ${f.name}`).join(',');
    const typehash = keccak256(toBytes(`Eip3009CallbackData(${fields})`));
    // The constant is in the bytecode as a PUSH32 (solc folds keccak256 of a literal).
    assert.ok(TollgateSettlementArtifact.bytecode.includes(typehash.slice(2)), 'typehash not in the bytecode');
  });

  test('calldata over 8 KiB or not hex bytes is refused', () => {
    assert.throws(() => buildCalldataSignRequest({ ...input, calldata: toHex(new Uint8Array(8193)) }), /8193 bytes; at most 8192/);
    assert.throws(() => buildCalldataSignRequest({ ...input, calldata: '0xabc' as Hex }), /hex bytes/);
    assert.doesNotThrow(() => buildCalldataSignRequest({ ...input, calldata: toHex(new Uint8Array(8192)) }));
  });
});

describe('callback envelope', () => {
  test('round-trips; the empty byte string means "no signed calldata"', () => {
    const env = { orderId: orderIdToBytes32('ord_x'), calldata: '0x0102' as Hex, calldataNonce: 3n, deadline: 99n, signature: toHex(new Uint8Array(65).fill(7)) };
    assert.deepEqual(decodeCallbackEnvelope(encodeCallbackEnvelope(env)), env);
    assert.equal(decodeCallbackEnvelope('0x'), null);
  });
});

describe('callbackDataFor', () => {
  test('takes nonce and deadline from the request; refuses other calldata; NO_CALLBACK_DATA is all empty', () => {
    const req = buildCalldataSignRequest(input);
    const sig = toHex(new Uint8Array(65).fill(1));
    assert.deepEqual(callbackDataFor(req, '0xdeadbeef', sig), { data: '0xdeadbeef', calldataNonce: 7n, deadline: 1_900_000_000n, signature: sig });
    assert.throws(() => callbackDataFor(req, '0xdeadbeee', sig), /does not match/);
    assert.deepEqual(NO_CALLBACK_DATA, { data: '0x', calldataNonce: 0n, deadline: 0n, signature: '0x' });
  });
});
