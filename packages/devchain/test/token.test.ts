// TestToken on a real anvil: ERC-20 basics, EIP-2612 permit and EIP-3009 authorizations signed
// with viem exactly as a wallet would sign them.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { localChain, startAnvil, type AnvilHandle } from '../src/index.ts';
import { BaseError, ContractFunctionRevertedError, createPublicClient, createWalletClient, hashDomain, http, parseEventLogs, parseSignature, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { getEip712Domain } from 'viem/actions';
import { TestTokenArtifact } from '@tollgate/contracts';

const abi = TestTokenArtifact.abi;
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

let anvil: AnvilHandle;
let publicClient: ReturnType<typeof makePublicClient>;
let token: Address;
let deployer: PrivateKeyAccount;
let alice: PrivateKeyAccount; // payer / signer
let bob: PrivateKeyAccount; // payee
let relayer: PrivateKeyAccount; // submits authorizations, pays gas

function makePublicClient(a: AnvilHandle) {
  return createPublicClient({ chain: localChain(a.rpcUrl, a.chainId), transport: http(a.rpcUrl), pollingInterval: 20 });
}
function walletOf(account: PrivateKeyAccount) {
  return createWalletClient({ account, chain: localChain(anvil.rpcUrl, anvil.chainId), transport: http(anvil.rpcUrl) });
}
const balanceOf = (who: Address) => publicClient.readContract({ address: token, abi, functionName: 'balanceOf', args: [who] });
const domain = () => ({ name: 'USD Coin', version: '2', chainId: anvil.chainId, verifyingContract: token }) as const;
const nowSeconds = async () => (await publicClient.getBlock()).timestamp;

/** Asserts the promise fails with the contract's custom error `errorName` (decoded by viem from the ABI). */
async function assertRevertsWith(promise: Promise<unknown>, errorName: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof BaseError, `not a viem error: ${String(err)}`);
    const revert = err.walk((e) => e instanceof ContractFunctionRevertedError);
    assert.ok(revert instanceof ContractFunctionRevertedError, `no revert in: ${err.shortMessage}`);
    assert.equal(revert.data?.errorName, errorName);
    return true;
  });
}

const authorizationTypes = (primaryType: 'TransferWithAuthorization' | 'ReceiveWithAuthorization') => ({
  [primaryType]: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
});

/** Signs an EIP-3009 authorization and returns the contract call arguments. */
async function signAuthorization(
  signer: PrivateKeyAccount,
  message: { from: Address; to: Address; value: bigint; validAfter?: bigint; validBefore?: bigint; nonce?: Hex },
  primaryType: 'TransferWithAuthorization' | 'ReceiveWithAuthorization' = 'TransferWithAuthorization',
) {
  const full = {
    validAfter: 0n,
    validBefore: (await nowSeconds()) + 3600n,
    nonce: toHex(randomBytes(32)),
    ...message,
  };
  const sig = parseSignature(await signer.signTypedData({ domain: domain(), types: authorizationTypes(primaryType), primaryType, message: full }));
  return [full.from, full.to, full.value, full.validAfter, full.validBefore, full.nonce, Number(sig.v), sig.r, sig.s] as const;
}

before(async () => {
  anvil = await startAnvil();
  publicClient = makePublicClient(anvil);
  [deployer, alice, bob, relayer] = anvil.accounts.slice(0, 4).map((a) => privateKeyToAccount(a.privateKey)) as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount];
  const hash = await walletOf(deployer).deployContract({ ...TestTokenArtifact, args: ['USD Coin', 'USDC'] });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  token = receipt.contractAddress!;
  // Alice starts with 100 tokens, minted by someone who is not the deployer: mint is open.
  await publicClient.waitForTransactionReceipt({
    hash: await walletOf(relayer).writeContract({ address: token, abi, functionName: 'mint', args: [alice.address, 100_000_000n] }),
  });
});
after(() => anvil?.stop());

describe('ERC-20', () => {
  test('metadata: name, symbol, 6 decimals, EIP-712 version "2"', async () => {
    const read = <F extends 'name' | 'symbol' | 'decimals' | 'version'>(functionName: F) => publicClient.readContract({ address: token, abi, functionName });
    assert.equal(await read('name'), 'USD Coin');
    assert.equal(await read('symbol'), 'USDC');
    assert.equal(await read('decimals'), 6);
    assert.equal(await read('version'), '2');
  });

  test('mint by anyone credits the holder and total supply', async () => {
    assert.equal(await balanceOf(alice.address), 100_000_000n);
    assert.equal(await publicClient.readContract({ address: token, abi, functionName: 'totalSupply' }), 100_000_000n);
  });

  test('transfer moves the balance and emits Transfer', async () => {
    const hash = await walletOf(alice).writeContract({ address: token, abi, functionName: 'transfer', args: [bob.address, 1_000_000n] });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    const logs = parseEventLogs({ abi, eventName: 'Transfer', logs: receipt.logs });
    assert.equal(logs.length, 1);
    assert.deepEqual(logs[0]!.args, { from: alice.address, to: bob.address, value: 1_000_000n });
    assert.equal(logs[0]!.address.toLowerCase(), token.toLowerCase());
    assert.equal(await balanceOf(bob.address), 1_000_000n);
  });

  test('transfer beyond the balance reverts with InsufficientBalance', async () => {
    await assertRevertsWith(publicClient.simulateContract({ account: bob, address: token, abi, functionName: 'transfer', args: [alice.address, 10n ** 18n] }), 'InsufficientBalance');
  });
});

describe('EIP-712 domain', () => {
  test('DOMAIN_SEPARATOR and eip712Domain() match what viem signs against', async () => {
    const separator = await publicClient.readContract({ address: token, abi, functionName: 'DOMAIN_SEPARATOR' });
    assert.equal(
      separator,
      hashDomain({
        domain: { ...domain(), chainId: BigInt(anvil.chainId) },
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
        },
      }),
    );
    const { domain: read } = await getEip712Domain(publicClient, { address: token });
    assert.deepEqual({ ...read, verifyingContract: read.verifyingContract.toLowerCase() }, { name: 'USD Coin', version: '2', chainId: anvil.chainId, verifyingContract: token.toLowerCase(), salt: `0x${'0'.repeat(64)}` });
  });
});

describe('EIP-2612 permit', () => {
  const permitTypes = {
    Permit: [
      { name: 'owner', type: 'address' },
      { name: 'spender', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'nonce', type: 'uint256' },
      { name: 'deadline', type: 'uint256' },
    ],
  } as const;
  async function signPermit(value: bigint, deadline: bigint) {
    const nonce = await publicClient.readContract({ address: token, abi, functionName: 'nonces', args: [alice.address] });
    const message = { owner: alice.address, spender: relayer.address, value, nonce, deadline };
    const sig = parseSignature(await alice.signTypedData({ domain: domain(), types: permitTypes, primaryType: 'Permit', message }));
    return [alice.address, relayer.address, value, deadline, Number(sig.v), sig.r, sig.s] as const;
  }

  test('a signed permit sets the allowance, bumps the nonce, and a replay fails', async () => {
    const args = await signPermit(5_000_000n, (await nowSeconds()) + 600n);
    const hash = await walletOf(relayer).writeContract({ address: token, abi, functionName: 'permit', args });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    const [approval] = parseEventLogs({ abi, eventName: 'Approval', logs: receipt.logs });
    assert.deepEqual(approval?.args, { owner: alice.address, spender: relayer.address, value: 5_000_000n });
    assert.equal(await publicClient.readContract({ address: token, abi, functionName: 'allowance', args: [alice.address, relayer.address] }), 5_000_000n);
    assert.equal(await publicClient.readContract({ address: token, abi, functionName: 'nonces', args: [alice.address] }), 1n);

    // The spender can now pull the funds.
    const pull = await walletOf(relayer).writeContract({ address: token, abi, functionName: 'transferFrom', args: [alice.address, bob.address, 2_000_000n] });
    assert.equal((await publicClient.waitForTransactionReceipt({ hash: pull })).status, 'success');

    // Same signature again: the nonce moved on, so it recovers to some other address.
    await assertRevertsWith(publicClient.simulateContract({ account: relayer, address: token, abi, functionName: 'permit', args }), 'InvalidSignature');
  });

  test('an expired permit reverts with PermitExpired', async () => {
    const args = await signPermit(1n, (await nowSeconds()) - 1n);
    await assertRevertsWith(publicClient.simulateContract({ account: relayer, address: token, abi, functionName: 'permit', args }), 'PermitExpired');
  });
});

describe('EIP-3009 authorizations', () => {
  test('transferWithAuthorization moves funds for a relayer, marks the nonce used, and a replay reverts', async () => {
    const args = await signAuthorization(alice, { from: alice.address, to: bob.address, value: 3_000_000n });
    const nonce = args[5];
    const [aliceBefore, bobBefore] = [await balanceOf(alice.address), await balanceOf(bob.address)];

    const hash = await walletOf(relayer).writeContract({ address: token, abi, functionName: 'transferWithAuthorization', args });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    assert.equal(receipt.status, 'success');
    const [used] = parseEventLogs({ abi, eventName: 'AuthorizationUsed', logs: receipt.logs });
    assert.deepEqual(used?.args, { authorizer: alice.address, nonce });
    const [transfer] = parseEventLogs({ abi, eventName: 'Transfer', logs: receipt.logs });
    assert.deepEqual(transfer?.args, { from: alice.address, to: bob.address, value: 3_000_000n });
    assert.equal(await balanceOf(alice.address), aliceBefore - 3_000_000n);
    assert.equal(await balanceOf(bob.address), bobBefore + 3_000_000n);
    assert.equal(await publicClient.readContract({ address: token, abi, functionName: 'authorizationState', args: [alice.address, nonce] }), true);

    // Replay: simulation names the error, and a forced send (fixed gas, no estimate) fails on chain.
    await assertRevertsWith(publicClient.simulateContract({ account: relayer, address: token, abi, functionName: 'transferWithAuthorization', args }), 'AuthorizationAlreadyUsed');
    const replay = await walletOf(relayer).writeContract({ address: token, abi, functionName: 'transferWithAuthorization', args, gas: 200_000n });
    assert.equal((await publicClient.waitForTransactionReceipt({ hash: replay })).status, 'reverted');
    assert.equal(await balanceOf(bob.address), bobBefore + 3_000_000n);
  });

  test('bad signatures revert with InvalidSignature: wrong signer, tampered value, high-s twin', async () => {
    const simulate = (args: Awaited<ReturnType<typeof signAuthorization>>) => publicClient.simulateContract({ account: relayer, address: token, abi, functionName: 'transferWithAuthorization', args });

    // Bob signs a transfer out of Alice's account.
    await assertRevertsWith(simulate(await signAuthorization(bob, { from: alice.address, to: bob.address, value: 1n })), 'InvalidSignature');

    // Alice signed 1 unit; the relayer submits 1,000,000.
    const signed = await signAuthorization(alice, { from: alice.address, to: bob.address, value: 1n });
    await assertRevertsWith(simulate([signed[0], signed[1], 1_000_000n, ...signed.slice(3)] as unknown as typeof signed), 'InvalidSignature');

    // (r, n - s, flipped v) recovers to Alice too; only the s <= n/2 check rejects it.
    const [from, to, value, validAfter, validBefore, nonce, v, r, s] = signed;
    const highS = toHex(SECP256K1_N - BigInt(s), { size: 32 });
    await assertRevertsWith(simulate([from, to, value, validAfter, validBefore, nonce, v === 27 ? 28 : 27, r, highS]), 'InvalidSignature');

    // Garbage that ecrecover maps to address(0).
    await assertRevertsWith(simulate([from, to, value, validAfter, validBefore, nonce, 27, `0x${'0'.repeat(64)}`, `0x${'0'.repeat(63)}1`]), 'InvalidSignature');

    // The untouched signature still works, so the failures above were about the signature.
    await simulate(signed);
  });

  test('validity window: before validAfter and at validBefore revert', async () => {
    const now = await nowSeconds();
    const simulate = (args: Awaited<ReturnType<typeof signAuthorization>>) => publicClient.simulateContract({ account: relayer, address: token, abi, functionName: 'transferWithAuthorization', args });
    await assertRevertsWith(simulate(await signAuthorization(alice, { from: alice.address, to: bob.address, value: 1n, validAfter: now + 3600n })), 'AuthorizationNotYetValid');
    await assertRevertsWith(simulate(await signAuthorization(alice, { from: alice.address, to: bob.address, value: 1n, validBefore: now })), 'AuthorizationExpired');
  });

  test('receiveWithAuthorization: only the payee may submit', async () => {
    const args = await signAuthorization(alice, { from: alice.address, to: bob.address, value: 4n }, 'ReceiveWithAuthorization');
    await assertRevertsWith(publicClient.simulateContract({ account: relayer, address: token, abi, functionName: 'receiveWithAuthorization', args }), 'CallerMustBePayee');
    // A TransferWithAuthorization signature is not valid for receiveWithAuthorization (distinct typehash).
    const wrongType = await signAuthorization(alice, { from: alice.address, to: bob.address, value: 4n });
    await assertRevertsWith(publicClient.simulateContract({ account: bob, address: token, abi, functionName: 'receiveWithAuthorization', args: wrongType }), 'InvalidSignature');
    const before = await balanceOf(bob.address);
    const hash = await walletOf(bob).writeContract({ address: token, abi, functionName: 'receiveWithAuthorization', args });
    assert.equal((await publicClient.waitForTransactionReceipt({ hash })).status, 'success');
    assert.equal(await balanceOf(bob.address), before + 4n);
  });

  test('cancelAuthorization burns the nonce so the authorization can no longer be used', async () => {
    const args = await signAuthorization(alice, { from: alice.address, to: bob.address, value: 5n });
    const nonce = args[5];
    const cancel = parseSignature(
      await alice.signTypedData({
        domain: domain(),
        types: {
          CancelAuthorization: [
            { name: 'authorizer', type: 'address' },
            { name: 'nonce', type: 'bytes32' },
          ],
        },
        primaryType: 'CancelAuthorization',
        message: { authorizer: alice.address, nonce },
      }),
    );
    const hash = await walletOf(relayer).writeContract({
      address: token,
      abi,
      functionName: 'cancelAuthorization',
      args: [alice.address, nonce, Number(cancel.v), cancel.r, cancel.s],
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    const [canceled] = parseEventLogs({ abi, eventName: 'AuthorizationCanceled', logs: receipt.logs });
    assert.deepEqual(canceled?.args, { authorizer: alice.address, nonce });
    assert.equal(await publicClient.readContract({ address: token, abi, functionName: 'authorizationState', args: [alice.address, nonce] }), true);
    await assertRevertsWith(publicClient.simulateContract({ account: relayer, address: token, abi, functionName: 'transferWithAuthorization', args }), 'AuthorizationAlreadyUsed');
  });
});
