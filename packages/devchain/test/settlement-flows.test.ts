// TollgateSettlement on a real anvil: every way an order's funds arrive (pool, EIP-3009, permit,
// allowance; USDC-like and USDT-like tokens), with and without a callback, and the gas each path
// costs (printed at the end; the table in packages/contracts/README.md comes from this run).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ExampleCreditAdapterArtifact, TestCallbackAdapterArtifact, TestTetherTokenArtifact, TestTokenArtifact, decodeCallbackEnvelope, orderIdToBytes32 } from '@tollgate/contracts';
import { encodeAbiParameters, parseEventLogs, toHex, type Hex, type TransactionReceipt } from 'viem';
import { NO_CALLBACK, SETTLEMENT_ABI, approveSettlement, balanceOf, buildOrder, orderState, payIntoPool, send, signCallback, signPermit, signReceiveAuthorization, startSettlementEnv, walletOf, type Order, type SettlementEnv } from './settlement-fixtures.ts';

let env: SettlementEnv;
const gas: [string, bigint][] = [];
// Generous ceilings: a regression that doubles a path's cost fails here, not on a merchant's bill.
const GAS_CEILING = 250_000n;

before(async () => {
  env = await startSettlementEnv();
  // Measured gas should compare paths, not first-time balances: give every recipient (merchant,
  // adapter) and the pool a non-zero balance of both tokens first (a zero → non-zero balance
  // write costs ~17k more, once per recipient and token).
  for (const token of [env.usdc, env.usdt]) {
    for (const to of [env.merchant, env.adapter, env.settlement]) {
      const abi = token === env.usdt ? TestTetherTokenArtifact.abi : TestTokenArtifact.abi;
      const hash = await walletOf(env, env.stranger).writeContract({ address: token, abi, functionName: 'transfer', args: [to, 1n] });
      await env.client.waitForTransactionReceipt({ hash });
    }
  }
});
after(async () => {
  if (gas.length > 0) console.log(`gas per settlement path:\n${gas.map(([k, v]) => `  ${k}: ${v}`).join('\n')}`);
  await env?.stop();
});

function record(label: string, receipt: TransactionReceipt): void {
  assert.ok(receipt.gasUsed < GAS_CEILING, `${label} used ${receipt.gasUsed} gas`);
  gas.push([label, receipt.gasUsed]);
}

function settledEvent(receipt: TransactionReceipt) {
  const [event] = parseEventLogs({ abi: SETTLEMENT_ABI, eventName: 'Settled', logs: receipt.logs });
  assert.ok(event, 'no Settled event');
  return event.args;
}

const accountCalldata = (account: Hex) => encodeAbiParameters([{ type: 'bytes32' }], [account]);
const credits = (account: Hex, token: Hex) => env.client.readContract({ address: env.adapter, abi: ExampleCreditAdapterArtifact.abi, functionName: 'credits', args: [account, token] });

describe('plain settlement to the merchant wallet (no callback)', () => {
  for (const symbol of ['USDC', 'USDT-like'] as const) {
    test(`pool (${symbol}): a plain transfer in, settle pays the merchant, once`, async () => {
      const token = symbol === 'USDC' ? env.usdc : env.usdt;
      const order = buildOrder(env, { token, amount: 1_250_000n });
      record(`payer's own transfer into the pool (${symbol}), for comparison`, await payIntoPool(env, token, order.amount));
      const before = await balanceOf(env, token, env.merchant);
      const receipt = await send(env, env.executor, 'settle', [order, NO_CALLBACK]);
      record(`pool → wallet (${symbol})`, receipt);
      assert.equal(await balanceOf(env, token, env.merchant), before + order.amount);
      assert.deepEqual(settledEvent(receipt), { orderId: order.orderId, payer: order.payer, payee: env.merchant, token, amount: order.amount, callback: false, source: 0 });
      assert.equal(await orderState(env, order.orderId), 1);
    });
  }

  test('EIP-3009 (USDC): settleWithAuthorization pulls from the payer and pays in one transaction', async () => {
    const order = buildOrder(env);
    const payerBefore = await balanceOf(env, env.usdc, env.payer.address);
    const poolBefore = await balanceOf(env, env.usdc, env.settlement);
    const receipt = await send(env, env.executor, 'settleWithAuthorization', [order, NO_CALLBACK, await signReceiveAuthorization(env, order)]);
    record('3009 → wallet (USDC)', receipt);
    assert.equal(await balanceOf(env, env.usdc, env.payer.address), payerBefore - order.amount);
    assert.equal(await balanceOf(env, env.usdc, env.settlement), poolBefore, 'nothing stays in the pool');
    assert.equal(settledEvent(receipt).source, 1);
  });

  test('EIP-2612 (USDC): settleWithPermit', async () => {
    const order = buildOrder(env);
    const receipt = await send(env, env.executor, 'settleWithPermit', [order, NO_CALLBACK, await signPermit(env, order)]);
    record('permit → wallet (USDC)', receipt);
    assert.equal(settledEvent(receipt).source, 2);
  });

  test('a permit someone else already submitted does not block settlement (allowance is used)', async () => {
    const order = buildOrder(env);
    const permit = await signPermit(env, order);
    const hash = await walletOf(env, env.stranger).writeContract({ address: env.usdc, abi: TestTokenArtifact.abi, functionName: 'permit', args: [order.payer, env.settlement, permit.value, permit.deadline, permit.v, permit.r, permit.s] });
    assert.equal((await env.client.waitForTransactionReceipt({ hash })).status, 'success', 'front-run permit landed');
    const before = await balanceOf(env, env.usdc, env.merchant);
    await send(env, env.executor, 'settleWithPermit', [order, NO_CALLBACK, permit]);
    assert.equal(await balanceOf(env, env.usdc, env.merchant), before + order.amount);
  });

  for (const symbol of ['USDC', 'USDT-like'] as const) {
    test(`allowance (${symbol}): approve first, settleFromAllowance pulls and pays`, async () => {
      const token = symbol === 'USDC' ? env.usdc : env.usdt;
      const order = buildOrder(env, { token });
      await approveSettlement(env, token, order.amount);
      const before = await balanceOf(env, token, env.merchant);
      const receipt = await send(env, env.executor, 'settleFromAllowance', [order, NO_CALLBACK]);
      record(`allowance → wallet (${symbol})`, receipt);
      assert.equal(await balanceOf(env, token, env.merchant), before + order.amount);
      assert.equal(settledEvent(receipt).source, 3);
    });
  }
});

describe('settlement with the example credit adapter', () => {
  async function settleWithCredit(order: Order, how: 'pool' | '3009' | 'allowance', label: string) {
    const account = toHex(randomBytes(32));
    const cb = await signCallback(env, order, { data: accountCalldata(account) });
    const adapterBefore = await balanceOf(env, order.token, env.adapter);
    let receipt: TransactionReceipt;
    if (how === 'pool') {
      await payIntoPool(env, order.token, order.amount);
      receipt = await send(env, env.executor, 'settle', [order, cb]);
    } else if (how === '3009') {
      receipt = await send(env, env.executor, 'settleWithAuthorization', [order, cb, await signReceiveAuthorization(env, order)]);
    } else {
      await approveSettlement(env, order.token, order.amount);
      receipt = await send(env, env.executor, 'settleFromAllowance', [order, cb]);
    }
    record(label, receipt);
    assert.equal(await credits(account as Hex, order.token), order.amount, 'the chosen in-app account is credited');
    assert.equal(await balanceOf(env, order.token, env.adapter), adapterBefore + order.amount);
    const [credited] = parseEventLogs({ abi: ExampleCreditAdapterArtifact.abi, eventName: 'Credited', logs: receipt.logs });
    assert.deepEqual(credited?.args, { account, payer: order.payer, token: order.token, amount: order.amount, orderId: order.orderId });
    assert.equal(settledEvent(receipt).callback, true);
  }

  test('pool (USDC) + signed calldata → credit', () => settleWithCredit(buildOrder(env, { payee: env.adapter, callback: true }), 'pool', 'pool → adapter, signed calldata (USDC)'));
  test('EIP-3009 (USDC) + signed calldata → credit', () => settleWithCredit(buildOrder(env, { payee: env.adapter, callback: true }), '3009', '3009 → adapter, signed calldata (USDC)'));
  test('allowance (USDT-like) + signed calldata → credit', () => settleWithCredit(buildOrder(env, { payee: env.adapter, callback: true, token: env.usdt }), 'allowance', 'allowance → adapter, signed calldata (USDT-like)'));

  test('callback without calldata: the payer’s own address is credited, calldata_ is empty', async () => {
    const order = buildOrder(env, { payee: env.adapter, callback: true });
    await payIntoPool(env, order.token, order.amount);
    const receipt = await send(env, env.executor, 'settle', [order, NO_CALLBACK]);
    record('pool → adapter, no calldata (USDC)', receipt);
    const payerAccount = `0x${order.payer.slice(2).toLowerCase().padStart(64, '0')}` as Hex;
    assert.equal(await credits(payerAccount, order.token), order.amount);
  });

  test('the adapter receives the envelope the settlement contract built (order id of THIS order)', async () => {
    const text = `ord_${randomBytes(10).toString('hex')}`;
    const order = buildOrder(env, { orderId: orderIdToBytes32(text), payee: env.testAdapter, callback: true });
    const data = toHex(randomBytes(100));
    const cb = await signCallback(env, order, { data, adapter: env.testAdapter, orderIdText: text });
    await payIntoPool(env, order.token, order.amount);
    await send(env, env.executor, 'settle', [order, cb]);
    const read = <F extends 'lastCalldata' | 'lastPayer' | 'lastAmount'>(functionName: F) => env.client.readContract({ address: env.testAdapter, abi: TestCallbackAdapterArtifact.abi, functionName });
    assert.deepEqual(decodeCallbackEnvelope(await read('lastCalldata')), { orderId: order.orderId, calldata: data, calldataNonce: cb.calldataNonce, deadline: cb.deadline, signature: cb.signature });
    assert.equal(await read('lastPayer'), order.payer);
    assert.equal(await read('lastAmount'), order.amount);
  });
});
