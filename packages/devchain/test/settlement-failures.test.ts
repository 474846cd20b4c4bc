// TollgateSettlement on a real anvil: every failure path of a settlement reverts with its own
// custom error and changes nothing — bad or expired signatures, replays, wrong amounts, failing
// callbacks (whose pulls and payouts are undone), re-entry — and refunds follow their rules.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { TestCallbackAdapterArtifact, TestTokenArtifact } from '@tollgate/contracts';
import { decodeErrorResult, encodeAbiParameters, encodeFunctionData, parseEventLogs, toHex, type Hex } from 'viem';
import {
  NO_CALLBACK,
  SETTLEMENT_ABI,
  approveSettlement,
  balanceOf,
  buildOrder,
  expectRevert,
  expectRevertOf,
  nowSeconds,
  orderState,
  payIntoPool,
  send,
  sendReverting,
  signCallback,
  signPermit,
  signReceiveAuthorization,
  startSettlementEnv,
  walletOf,
  type SettlementEnv,
} from './settlement-fixtures.ts';

let env: SettlementEnv;
before(async () => {
  env = await startSettlementEnv();
});
after(() => env?.stop());

const accountCalldata = () => encodeAbiParameters([{ type: 'bytes32' }], [toHex(randomBytes(32))]);
const setMode = async (mode: number) => {
  const hash = await walletOf(env, env.stranger).writeContract({ address: env.testAdapter, abi: TestCallbackAdapterArtifact.abi, functionName: 'setMode', args: [mode] });
  await env.client.waitForTransactionReceipt({ hash });
};
const MODE = { Succeed: 0, ReturnFalse: 1, Revert: 2, ReturnNothing: 3, Reenter: 4 } as const;

describe('replay: each order settles at most once, enforced on chain', () => {
  test('a second settle of the same order reverts with OrderAlreadyProcessed, even with funds in the pool', async () => {
    const order = buildOrder(env);
    await payIntoPool(env, order.token, order.amount * 2n);
    await send(env, env.executor, 'settle', [order, NO_CALLBACK]);
    const [id, state] = await expectRevert(env, env.executor, 'settle', [order, NO_CALLBACK], 'OrderAlreadyProcessed');
    assert.deepEqual([id, state], [order.orderId, 1]);
    await expectRevert(env, env.executor, 'settleFromAllowance', [order, NO_CALLBACK], 'OrderAlreadyProcessed');
    await expectRevert(env, env.executor, 'refund', [order.orderId, order.payer, order.token, order.amount], 'OrderAlreadyProcessed');
    // On chain, not only in simulation: the mined second attempt reverts and the merchant is paid once.
    const merchantBefore = await balanceOf(env, order.token, env.merchant);
    await sendReverting(env, env.executor, 'settle', [order, NO_CALLBACK]);
    assert.equal(await balanceOf(env, order.token, env.merchant), merchantBefore);
  });

  test('a replayed calldata signature (another order) fails: the signature binds the order id', async () => {
    const first = buildOrder(env, { payee: env.adapter, callback: true });
    const cb = await signCallback(env, first, { data: accountCalldata() });
    await payIntoPool(env, first.token, first.amount * 2n);
    await send(env, env.executor, 'settle', [first, cb]);
    const second = { ...first, orderId: buildOrder(env).orderId };
    await expectRevert(env, env.executor, 'settle', [second, cb], 'InvalidCalldataSignature');
  });

  test('a used EIP-3009 authorization cannot pay a second order', async () => {
    const order = buildOrder(env);
    const auth = await signReceiveAuthorization(env, order);
    await send(env, env.executor, 'settleWithAuthorization', [order, NO_CALLBACK, auth]);
    await expectRevert(env, env.executor, 'settleWithAuthorization', [{ ...order, orderId: buildOrder(env).orderId }, NO_CALLBACK, auth], 'AuthorizationAlreadyUsed');
  });
});

describe('signatures, deadlines and amounts', () => {
  test('calldata signed by someone else than the payer → InvalidCalldataSignature naming the payer', async () => {
    const order = buildOrder(env, { payee: env.adapter, callback: true });
    await payIntoPool(env, order.token, order.amount);
    const cb = await signCallback(env, order, { data: accountCalldata(), signer: env.stranger });
    const [expected, recovered] = await expectRevert(env, env.executor, 'settle', [order, cb], 'InvalidCalldataSignature');
    assert.deepEqual([expected, recovered], [order.payer, env.stranger.address]);
  });

  test('tampered calldata, wrong amount, wrong token, wrong adapter domain or a malformed signature → InvalidCalldataSignature', async () => {
    const order = buildOrder(env, { payee: env.adapter, callback: true });
    await payIntoPool(env, env.usdc, order.amount * 2n);
    await payIntoPool(env, env.usdt, order.amount);
    const cb = await signCallback(env, order, { data: accountCalldata() });
    const cases = [
      [order, { ...cb, data: accountCalldata() }],
      [{ ...order, amount: order.amount - 1n }, cb],
      [{ ...order, token: env.usdt }, cb],
      [order, await signCallback(env, order, { data: cb.data, name: 'Some Other Adapter' })],
      [order, { ...cb, signature: cb.signature.slice(0, -2) as Hex }],
    ] as const;
    for (const args of cases) await expectRevert(env, env.executor, 'settle', args, 'InvalidCalldataSignature');
  });

  test('an expired calldata deadline → CalldataSignatureExpired', async () => {
    const order = buildOrder(env, { payee: env.adapter, callback: true });
    await payIntoPool(env, order.token, order.amount);
    const cb = await signCallback(env, order, { data: accountCalldata(), deadline: (await nowSeconds(env)) - 1n });
    await expectRevert(env, env.executor, 'settle', [order, cb], 'CalldataSignatureExpired');
  });

  test('an expired EIP-3009 authorization, or one for another amount, is refused by the token', async () => {
    const order = buildOrder(env);
    const expired = await signReceiveAuthorization(env, order, { validBefore: (await nowSeconds(env)) - 1n });
    await expectRevert(env, env.executor, 'settleWithAuthorization', [order, NO_CALLBACK, expired], 'AuthorizationExpired');
    const otherAmount = await signReceiveAuthorization(env, order, { value: order.amount + 1n });
    await expectRevert(env, env.executor, 'settleWithAuthorization', [order, NO_CALLBACK, otherAmount], 'InvalidSignature');
    const wrongSigner = await signReceiveAuthorization(env, order, { signer: env.stranger });
    await expectRevert(env, env.executor, 'settleWithAuthorization', [order, NO_CALLBACK, wrongSigner], 'InvalidSignature');
  });

  test('an expired permit leaves no allowance: the pull fails with the token’s InsufficientAllowance', async () => {
    const order = buildOrder(env);
    const allowance = await env.client.readContract({ address: order.token, abi: TestTokenArtifact.abi, functionName: 'allowance', args: [order.payer, env.settlement] });
    assert.equal(allowance, 0n, 'precondition: no earlier allowance');
    const permit = await signPermit(env, order, { deadline: (await nowSeconds(env)) - 1n });
    await expectRevert(env, env.executor, 'settleWithPermit', [order, NO_CALLBACK, permit], 'InsufficientAllowance');
  });

  test('too little in the pool → InsufficientPool; zero amount → ZeroAmount; zero payer → ZeroAddress', async () => {
    const poolNow = await balanceOf(env, env.usdc, env.settlement);
    await expectRevert(env, env.executor, 'settle', [buildOrder(env, { amount: poolNow + 1n }), NO_CALLBACK], 'InsufficientPool');
    await expectRevert(env, env.executor, 'settle', [buildOrder(env, { amount: 0n }), NO_CALLBACK], 'ZeroAmount');
    await expectRevert(env, env.executor, 'settle', [buildOrder(env, { payer: '0x0000000000000000000000000000000000000000', amount: 1n }), NO_CALLBACK], 'ZeroAddress');
  });

  test('a token that does not deliver the full amount → AmountMismatch; an address without code as token → TokenCallFailed', async () => {
    // The test adapter poses as a token whose transferFrom "succeeds" (returns nothing) but moves nothing.
    await setMode(MODE.Succeed);
    const [expected, received] = await expectRevert(env, env.executor, 'settleFromAllowance', [buildOrder(env, { token: env.testAdapter }), NO_CALLBACK], 'AmountMismatch');
    assert.deepEqual([expected, received], [2_500_000n, 0n]);
    const [token] = await expectRevert(env, env.executor, 'settle', [buildOrder(env, { token: env.merchant }), NO_CALLBACK], 'TokenCallFailed');
    assert.equal(token, env.merchant);
    await expectRevert(env, env.executor, 'refund', [buildOrder(env).orderId, env.payer.address, env.merchant, 1n], 'TokenCallFailed');
  });

  test('an allowance smaller than the amount → InsufficientAllowance, nothing pulled', async () => {
    const order = buildOrder(env, { token: env.usdt });
    await approveSettlement(env, env.usdt, order.amount - 1n);
    await expectRevert(env, env.executor, 'settleFromAllowance', [order, NO_CALLBACK], 'InsufficientAllowance');
  });

  test('calldata rules: none without a callback, none unsigned, at most 8 KiB, adapters must be contracts with an EIP-5267 domain', async () => {
    await payIntoPool(env, env.usdc, 10_000_000n);
    const plain = buildOrder(env, { amount: 1n });
    await expectRevert(env, env.executor, 'settle', [plain, { ...NO_CALLBACK, data: '0x01' }], 'CalldataWithoutCallback');
    const cbOrder = buildOrder(env, { amount: 1n, payee: env.adapter, callback: true });
    await expectRevert(env, env.executor, 'settle', [cbOrder, { ...NO_CALLBACK, data: '0x01' }], 'UnsignedCalldata');
    // The length is checked before the signature, so a signed small calldata swapped for a big one shows the bound.
    const big = { ...(await signCallback(env, cbOrder, { data: '0x01' })), data: toHex(randomBytes(8193)) };
    const [length] = await expectRevert(env, env.executor, 'settle', [cbOrder, big], 'CalldataTooLarge');
    assert.equal(length, 8193n);
    await expectRevert(env, env.executor, 'settle', [{ ...cbOrder, payee: env.merchant }, NO_CALLBACK], 'CallbackNotContract');
    const noDomain = { ...cbOrder, payee: env.usdt };
    await expectRevert(env, env.executor, 'settle', [noDomain, await signCallback(env, noDomain, { data: '0x', adapter: env.usdt })], 'CallbackDomainUnsupported');
  });
});

describe('a failing callback undoes the whole settlement', () => {
  test('revert: CallbackReverted carries the adapter’s reason; mined, it changes no balance and no order state', async () => {
    await setMode(MODE.Revert);
    const order = buildOrder(env, { payee: env.testAdapter, callback: true });
    await approveSettlement(env, order.token, order.amount);
    const [adapter, reason] = await expectRevert(env, env.executor, 'settleFromAllowance', [order, NO_CALLBACK], 'CallbackReverted');
    assert.equal(adapter, env.testAdapter);
    const inner = decodeErrorResult({ abi: TestCallbackAdapterArtifact.abi, data: reason as Hex });
    assert.deepEqual([inner.errorName, inner.args], ['Boom', [42n]]);

    const watch = [order.payer, env.testAdapter, env.settlement] as const;
    const before = await Promise.all(watch.map((w) => balanceOf(env, order.token, w)));
    await sendReverting(env, env.executor, 'settleFromAllowance', [order, NO_CALLBACK]);
    assert.deepEqual(await Promise.all(watch.map((w) => balanceOf(env, order.token, w))), before, 'pull and payout undone');
    assert.equal(await orderState(env, order.orderId), 0, 'the order can still be settled or refunded');
    const allowance = await env.client.readContract({ address: order.token, abi: TestTokenArtifact.abi, functionName: 'allowance', args: [order.payer, env.settlement] });
    assert.equal(allowance, order.amount, 'the allowance is not consumed');
  });

  test('returning false → CallbackRejected; returning nothing → CallbackRejected', async () => {
    const order = buildOrder(env, { payee: env.testAdapter, callback: true });
    await payIntoPool(env, order.token, order.amount);
    for (const mode of [MODE.ReturnFalse, MODE.ReturnNothing]) {
      await setMode(mode);
      await expectRevert(env, env.executor, 'settle', [order, NO_CALLBACK], 'CallbackRejected');
    }
    await setMode(MODE.Succeed);
  });

  test('after a failed callback the pooled funds are refundable, and the refund lands on the payer', async () => {
    await setMode(MODE.Revert);
    const order = buildOrder(env, { payee: env.testAdapter, callback: true, token: env.usdt });
    await payIntoPool(env, order.token, order.amount);
    await sendReverting(env, env.executor, 'settle', [order, NO_CALLBACK]);
    const payerBefore = await balanceOf(env, order.token, order.payer);
    const receipt = await send(env, env.executor, 'refund', [order.orderId, order.payer, order.token, order.amount]);
    assert.equal(await balanceOf(env, order.token, order.payer), payerBefore + order.amount);
    const [event] = parseEventLogs({ abi: SETTLEMENT_ABI, eventName: 'Refunded', logs: receipt.logs });
    assert.deepEqual(event?.args, { orderId: order.orderId, payer: order.payer, token: order.token, amount: order.amount });
    assert.equal(await orderState(env, order.orderId), 2);
    await setMode(MODE.Succeed);
    await expectRevert(env, env.executor, 'settle', [order, NO_CALLBACK], 'OrderAlreadyProcessed');
    await expectRevert(env, env.executor, 'refund', [order.orderId, order.payer, order.token, order.amount], 'OrderAlreadyProcessed');
  });

  test('refund rules: executor only, non-zero payer and amount, only what the pool holds', async () => {
    const order = buildOrder(env);
    const args = [order.orderId, order.payer, order.token, order.amount] as const;
    await expectRevert(env, env.stranger, 'refund', args, 'NotExecutor');
    await expectRevert(env, env.owner, 'refund', args, 'NotExecutor');
    await expectRevert(env, env.executor, 'refund', [order.orderId, '0x0000000000000000000000000000000000000000', order.token, 1n], 'ZeroAddress');
    await expectRevert(env, env.executor, 'refund', [order.orderId, order.payer, order.token, 0n], 'ZeroAmount');
    const pool = await balanceOf(env, order.token, env.settlement);
    await expectRevert(env, env.executor, 'refund', [order.orderId, order.payer, order.token, pool + 1n], 'InsufficientPool');
  });
});

describe('reentrancy', () => {
  test('an executor contract re-entering from inside the callback is stopped by the guard (Reentrancy)', async () => {
    await send(env, env.owner, 'setExecutor', [env.testAdapter]);
    try {
      const inner = buildOrder(env, { amount: 1n });
      await payIntoPool(env, env.usdc, 10n);
      const reentry = encodeFunctionData({ abi: SETTLEMENT_ABI, functionName: 'refund', args: [inner.orderId, inner.payer, inner.token, 1n] });
      const w = walletOf(env, env.stranger);
      await env.client.waitForTransactionReceipt({ hash: await w.writeContract({ address: env.testAdapter, abi: TestCallbackAdapterArtifact.abi, functionName: 'setReentry', args: [env.settlement, reentry] }) });
      await setMode(MODE.Reenter);
      const outer = buildOrder(env, { amount: 1n, payee: env.testAdapter, callback: true });
      const call = encodeFunctionData({ abi: SETTLEMENT_ABI, functionName: 'settle', args: [outer, NO_CALLBACK] });
      const [adapter, reason] = await expectRevertOf(
        env.client.simulateContract({ account: env.stranger, address: env.testAdapter, abi: [...TestCallbackAdapterArtifact.abi, ...SETTLEMENT_ABI], functionName: 'execute', args: [env.settlement, call] }),
        'CallbackReverted',
      );
      assert.equal(adapter, env.testAdapter);
      assert.equal(decodeErrorResult({ abi: SETTLEMENT_ABI, data: reason as Hex }).errorName, 'Reentrancy');
      assert.equal(await orderState(env, inner.orderId), 0);
      assert.equal(await orderState(env, outer.orderId), 0);
    } finally {
      await setMode(MODE.Succeed);
      await send(env, env.owner, 'setExecutor', [env.executor.address]);
    }
  });
});
