// ExampleCreditAdapter on a real anvil: one test per adapter rule (core allowlist, non-zero payer,
// amount received, calldata structure and bounds, reentrancy guard, events), plus its owner-only
// administration. The adapter is called directly by an allowlisted test account where a rule is
// easier to reach that way, and through TollgateSettlement where the rule concerns the core.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CALLBACK_ENVELOPE_PARAMETERS, ExampleCreditAdapterArtifact, TestCallbackAdapterArtifact, TestTetherTokenArtifact, encodeCallbackEnvelope } from '@tollgate/contracts';
import { decodeErrorResult, encodeAbiParameters, encodeFunctionData, getAddress, parseEventLogs, toHex, type Address, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { EXAMPLE_ADAPTER_DOMAIN } from '../src/index.ts';
import { ADAPTER_ABI, NO_CALLBACK, SETTLEMENT_ABI, balanceOf, buildOrder, expectRevert, expectRevertOf, freshOrderId, payIntoPool, startSettlementEnv, walletOf, type SettlementEnv } from './settlement-fixtures.ts';

let env: SettlementEnv;
let core: PrivateKeyAccount; // a second, test-only core: calls the adapter directly
const abi = ExampleCreditAdapterArtifact.abi;

type AdapterFn = 'onPaymentCallback' | 'setCore' | 'setAcceptedToken' | 'withdraw';
async function call(from: PrivateKeyAccount, functionName: AdapterFn, args: readonly unknown[]) {
  const hash = await walletOf(env, from).writeContract({ address: env.adapter, abi, functionName, args } as never);
  const receipt = await env.client.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success', `${functionName} reverted`);
  return receipt;
}
const reverts = (from: PrivateKeyAccount, functionName: AdapterFn, args: readonly unknown[], errorName: string) => expectRevertOf(env.client.simulateContract({ account: from, address: env.adapter, abi: ADAPTER_ABI, functionName, args } as never), errorName);
const credits = (account: Hex, token: Address) => env.client.readContract({ address: env.adapter, abi, functionName: 'credits', args: [account, token] });
const accounted = (token: Address) => env.client.readContract({ address: env.adapter, abi, functionName: 'accounted', args: [token] });

/** Sends `amount` of the USDT-like token to the adapter, as the core would before calling. */
async function fundAdapter(amount: bigint): Promise<void> {
  const hash = await walletOf(env, env.payer).writeContract({ address: env.usdt, abi: TestTetherTokenArtifact.abi, functionName: 'transfer', args: [env.adapter, amount] });
  await env.client.waitForTransactionReceipt({ hash });
}
const envelope = (data: Hex, orderId: Hex = freshOrderId()) => encodeCallbackEnvelope({ orderId, calldata: data, calldataNonce: 1n, deadline: 2n ** 40n, signature: toHex(randomBytes(65)) });
const account32 = (account: Hex) => encodeAbiParameters([{ type: 'bytes32' }], [account]);

before(async () => {
  env = await startSettlementEnv();
  core = env.stranger;
  await call(env.owner, 'setCore', [core.address, true]);
});
after(() => env?.stop());

describe('rule 1: only an allowlisted core calls the entry point', () => {
  test('an address that is not a core → NotCore', async () => {
    const [who] = await reverts(env.payer, 'onPaymentCallback', [env.payer.address, env.usdt, 1n, '0x'], 'NotCore');
    assert.equal(who, env.payer.address);
  });

  test('the settlement contract is the core deployed with it; removed from the allowlist, its settlement reverts with the adapter’s NotCore inside', async () => {
    assert.equal(await env.client.readContract({ address: env.adapter, abi, functionName: 'isCore', args: [env.settlement] }), true);
    await call(env.owner, 'setCore', [env.settlement, false]);
    try {
      const order = buildOrder(env, { payee: env.adapter, callback: true });
      await payIntoPool(env, order.token, order.amount);
      const [, reason] = await expectRevert(env, env.executor, 'settle', [order, NO_CALLBACK], 'CallbackReverted');
      assert.equal(decodeErrorResult({ abi, data: reason as Hex }).errorName, 'NotCore');
    } finally {
      await call(env.owner, 'setCore', [env.settlement, true]);
    }
  });
});

describe('rules 2 and 3: payer, token and amount', () => {
  test('a zero payer → ZeroPayer; an unaccepted token → TokenNotAccepted; a zero amount → ZeroAmount', async () => {
    await reverts(core, 'onPaymentCallback', ['0x0000000000000000000000000000000000000000', env.usdt, 1n, '0x'], 'ZeroPayer');
    const [token] = await reverts(core, 'onPaymentCallback', [env.payer.address, env.testAdapter, 1n, '0x'], 'TokenNotAccepted');
    assert.equal(token, env.testAdapter);
    await reverts(core, 'onPaymentCallback', [env.payer.address, env.usdt, 0n, '0x'], 'ZeroAmount');
  });

  test('an amount that did not arrive → AmountNotReceived; once it arrived, it is credited exactly once', async () => {
    const start = await accounted(env.usdt);
    const [expected, available] = await reverts(core, 'onPaymentCallback', [env.payer.address, env.usdt, 5_000_000n, '0x'], 'AmountNotReceived');
    assert.deepEqual([expected, available], [5_000_000n, 0n]);
    await fundAdapter(5_000_000n);
    const receipt = await call(core, 'onPaymentCallback', [env.payer.address, env.usdt, 5_000_000n, '0x']);
    assert.equal(await accounted(env.usdt), start + 5_000_000n);
    const payerAccount = `0x${env.payer.address.slice(2).toLowerCase().padStart(64, '0')}` as Hex;
    assert.equal(await credits(payerAccount, env.usdt), 5_000_000n);
    // Rule 6: the credit is visible off chain.
    const [event] = parseEventLogs({ abi, eventName: 'Credited', logs: receipt.logs });
    assert.deepEqual(event?.args, { account: payerAccount, payer: env.payer.address, token: env.usdt, amount: 5_000_000n, orderId: `0x${'0'.repeat(64)}` });
    // The same tokens cannot be credited twice.
    await reverts(core, 'onPaymentCallback', [env.payer.address, env.usdt, 1n, '0x'], 'AmountNotReceived');
  });
});

describe('rule 4: calldata structure and bounds', () => {
  test('malformed envelopes, a calldata other than one bytes32, a zero account, and an oversized envelope are refused', async () => {
    await fundAdapter(10n);
    const args = (calldata_: Hex) => [env.payer.address, env.usdt, 1n, calldata_] as const;
    await reverts(core, 'onPaymentCallback', args('0x1234'), 'MalformedCalldata');
    await reverts(core, 'onPaymentCallback', args(envelope('0x')), 'MalformedCalldata');
    await reverts(core, 'onPaymentCallback', args(envelope(toHex(randomBytes(33)))), 'MalformedCalldata');
    await reverts(core, 'onPaymentCallback', args(envelope(account32(`0x${'0'.repeat(64)}`))), 'InvalidAccount');
    // Built by hand: encodeCallbackEnvelope itself refuses calldata over 8 KiB.
    const oversized = encodeAbiParameters(CALLBACK_ENVELOPE_PARAMETERS, [freshOrderId(), toHex(randomBytes(8193 + 512)), 1n, 1n, '0x']);
    const [length] = await reverts(core, 'onPaymentCallback', args(oversized), 'CalldataTooLarge');
    assert.ok((length as bigint) > 8192n + 512n);
  });

  test('a well-formed envelope credits the chosen account, once per order id', async () => {
    await fundAdapter(2n);
    const account = toHex(randomBytes(32));
    const orderId = freshOrderId();
    const args = [env.payer.address, env.usdt, 1n, envelope(account32(account), orderId)] as const;
    await call(core, 'onPaymentCallback', args);
    assert.equal(await credits(account, env.usdt), 1n);
    const [id] = await reverts(core, 'onPaymentCallback', args, 'OrderAlreadyCredited');
    assert.equal(id, orderId);
  });
});

describe('rule 5: reentrancy guard', () => {
  test('a token that calls back into the adapter during withdraw is stopped (Reentrancy)', async () => {
    // The test adapter poses as a token: accepted, a huge balance, and a fallback that re-enters.
    const fake = env.testAdapter;
    await call(env.owner, 'setAcceptedToken', [fake, true]);
    await call(core, 'onPaymentCallback', [env.payer.address, fake, 100n, '0x']);
    const reentry = encodeFunctionData({ abi, functionName: 'onPaymentCallback', args: [env.payer.address, fake, 1n, '0x'] });
    const w = walletOf(env, env.payer);
    for (const [functionName, args] of [
      ['setReentry', [env.adapter, reentry]],
      ['setMode', [4]],
    ] as const) {
      const hash = await w.writeContract({ address: fake, abi: TestCallbackAdapterArtifact.abi, functionName, args } as never);
      await env.client.waitForTransactionReceipt({ hash });
    }
    await reverts(env.owner, 'withdraw', [fake, env.owner.address, 50n], 'Reentrancy');
    assert.equal(await accounted(fake), 100n, 'nothing withdrawn');
  });
});

describe('administration and domain', () => {
  test('setCore, setAcceptedToken and withdraw are owner-only; zero addresses are refused', async () => {
    for (const [fn, args] of [
      ['setCore', [env.payer.address, true]],
      ['setAcceptedToken', [env.usdc, false]],
      ['withdraw', [env.usdt, env.payer.address, 1n]],
    ] as const) {
      await reverts(env.payer, fn, args, 'NotOwner');
      await reverts(core, fn, args, 'NotOwner');
    }
    await reverts(env.owner, 'setCore', ['0x0000000000000000000000000000000000000000', true], 'ZeroAddress');
    await reverts(env.owner, 'withdraw', [env.usdt, '0x0000000000000000000000000000000000000000', 1n], 'ZeroAddress');
  });

  test('withdraw moves revenue out (USDT-like token, no return value) and lowers the accounted amount', async () => {
    const before = await accounted(env.usdt);
    const to = getAddress(toHex(randomBytes(20)));
    const receipt = await call(env.owner, 'withdraw', [env.usdt, to, 3n]);
    assert.equal(await balanceOf(env, env.usdt, to), 3n);
    assert.equal(await accounted(env.usdt), before - 3n);
    assert.equal(parseEventLogs({ abi, eventName: 'Withdrawn', logs: receipt.logs }).length, 1);
  });

  test('eip712Domain() is the EIP-5267 domain payers sign under', async () => {
    const d = await env.client.readContract({ address: env.adapter, abi, functionName: 'eip712Domain' });
    assert.deepEqual(d.slice(0, 5), ['0x0f', EXAMPLE_ADAPTER_DOMAIN.name, EXAMPLE_ADAPTER_DOMAIN.version, BigInt(env.dev.chainId), env.adapter]);
  });

  test('one settlement transaction carries the adapter’s Credited and then the settlement’s Settled', async () => {
    const order = buildOrder(env, { payee: env.adapter, callback: true });
    await payIntoPool(env, order.token, order.amount);
    const hash = await walletOf(env, env.executor).writeContract({ address: env.settlement, abi: SETTLEMENT_ABI, functionName: 'settle', args: [order, NO_CALLBACK] });
    const receipt = await env.client.waitForTransactionReceipt({ hash });
    const settled = parseEventLogs({ abi: SETTLEMENT_ABI, eventName: 'Settled', logs: receipt.logs });
    const credited = parseEventLogs({ abi, eventName: 'Credited', logs: receipt.logs });
    assert.equal(settled.length, 1);
    assert.equal(credited.length, 1);
    assert.ok(credited[0]!.logIndex < settled[0]!.logIndex, 'the adapter runs before Settled is emitted');
  });
});
