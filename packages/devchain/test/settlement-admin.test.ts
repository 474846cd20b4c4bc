// TollgateSettlement on a real anvil: who may do what. Only the executor settles and refunds (every
// entry point), the owner rotates the executor and pauses, and ownership moves in two steps.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TollgateSettlementArtifact } from '@tollgate/contracts';
import { parseEventLogs, toFunctionSelector } from 'viem';
import { NO_CALLBACK, SETTLEMENT_ABI, approveSettlement, balanceOf, buildOrder, expectRevert, payIntoPool, send, signPermit, signReceiveAuthorization, startSettlementEnv, walletOf, type SettlementEnv } from './settlement-fixtures.ts';

let env: SettlementEnv;
before(async () => {
  env = await startSettlementEnv();
});
after(() => env?.stop());

const read = <F extends 'owner' | 'pendingOwner' | 'executor' | 'paused'>(functionName: F) => env.client.readContract({ address: env.settlement, abi: TollgateSettlementArtifact.abi, functionName });
const ZERO = '0x0000000000000000000000000000000000000000' as const;

describe('executor-only entry points', () => {
  test('settle, settleWithAuthorization, settleWithPermit, settleFromAllowance and refund refuse anyone but the executor, the owner included', async () => {
    const order = buildOrder(env);
    await payIntoPool(env, order.token, order.amount);
    const calls = [
      ['settle', [order, NO_CALLBACK]],
      ['settleWithAuthorization', [order, NO_CALLBACK, await signReceiveAuthorization(env, order)]],
      ['settleWithPermit', [order, NO_CALLBACK, await signPermit(env, order)]],
      ['settleFromAllowance', [order, NO_CALLBACK]],
      ['refund', [order.orderId, order.payer, order.token, order.amount]],
    ] as const;
    for (const caller of [env.stranger, env.owner, env.payer]) {
      for (const [fn, args] of calls) {
        const [who] = await expectRevert(env, caller, fn, args, 'NotExecutor');
        assert.equal(who, caller.address);
      }
    }
    // The executor can: the same order settles.
    await send(env, env.executor, 'settle', [order, NO_CALLBACK]);
  });
});

describe('executor rotation', () => {
  test('only the owner rotates; never to zero; the old key stops working at once, the new one works', async () => {
    const next = env.stranger;
    await expectRevert(env, env.stranger, 'setExecutor', [next.address], 'NotOwner');
    await expectRevert(env, env.executor, 'setExecutor', [next.address], 'NotOwner');
    await expectRevert(env, env.owner, 'setExecutor', [ZERO], 'ZeroAddress');

    const receipt = await send(env, env.owner, 'setExecutor', [next.address]);
    const [event] = parseEventLogs({ abi: SETTLEMENT_ABI, eventName: 'ExecutorChanged', logs: receipt.logs });
    assert.deepEqual(event?.args, { previousExecutor: env.executor.address, newExecutor: next.address });
    assert.equal(await read('executor'), next.address);

    const order = buildOrder(env, { token: env.usdt });
    await approveSettlement(env, env.usdt, order.amount);
    await expectRevert(env, env.executor, 'settleFromAllowance', [order, NO_CALLBACK], 'NotExecutor');
    const before = await balanceOf(env, env.usdt, env.merchant);
    await send(env, next, 'settleFromAllowance', [order, NO_CALLBACK]);
    assert.equal(await balanceOf(env, env.usdt, env.merchant), before + order.amount);

    await send(env, env.owner, 'setExecutor', [env.executor.address]);
  });
});

describe('pause', () => {
  test('only the owner pauses; paused, settlements and refunds revert with ContractPaused; unpaused, they work', async () => {
    await expectRevert(env, env.stranger, 'setPaused', [true], 'NotOwner');
    await expectRevert(env, env.executor, 'setPaused', [true], 'NotOwner');
    const order = buildOrder(env);
    await payIntoPool(env, order.token, order.amount);
    await send(env, env.owner, 'setPaused', [true]);
    try {
      assert.equal(await read('paused'), true);
      await expectRevert(env, env.executor, 'settle', [order, NO_CALLBACK], 'ContractPaused');
      await expectRevert(env, env.executor, 'settleFromAllowance', [order, NO_CALLBACK], 'ContractPaused');
      await expectRevert(env, env.executor, 'refund', [order.orderId, order.payer, order.token, order.amount], 'ContractPaused');
    } finally {
      await send(env, env.owner, 'setPaused', [false]);
    }
    await send(env, env.executor, 'refund', [order.orderId, order.payer, order.token, order.amount]);
  });
});

describe('two-step ownership transfer', () => {
  test('start by the owner only; the owner stays until the pending owner accepts; nobody else can accept', async () => {
    const successor = env.stranger;
    await expectRevert(env, env.executor, 'transferOwnership', [successor.address], 'NotOwner');

    const started = await send(env, env.owner, 'transferOwnership', [successor.address]);
    const [startEvent] = parseEventLogs({ abi: SETTLEMENT_ABI, eventName: 'OwnershipTransferStarted', logs: started.logs });
    assert.deepEqual(startEvent?.args, { previousOwner: env.owner.address, newOwner: successor.address });
    assert.equal(await read('owner'), env.owner.address, 'step one changes nothing yet');
    assert.equal(await read('pendingOwner'), successor.address);
    // The current owner keeps every power until the handover.
    await send(env, env.owner, 'setPaused', [false]);

    for (const other of [env.owner, env.executor, env.payer]) {
      const [who] = await expectRevert(env, other, 'acceptOwnership', [], 'NotPendingOwner');
      assert.equal(who, other.address);
    }

    const accepted = await send(env, successor, 'acceptOwnership', []);
    const [doneEvent] = parseEventLogs({ abi: SETTLEMENT_ABI, eventName: 'OwnershipTransferred', logs: accepted.logs });
    assert.deepEqual(doneEvent?.args, { previousOwner: env.owner.address, newOwner: successor.address });
    assert.equal(await read('owner'), successor.address);
    assert.equal(await read('pendingOwner'), ZERO);
    await expectRevert(env, env.owner, 'setExecutor', [env.owner.address], 'NotOwner');
    await expectRevert(env, successor, 'acceptOwnership', [], 'NotPendingOwner');

    // A started transfer can be redirected or cancelled (pending = zero) by the owner.
    await send(env, successor, 'transferOwnership', [env.payer.address]);
    await send(env, successor, 'transferOwnership', [ZERO]);
    await expectRevert(env, env.payer, 'acceptOwnership', [], 'NotPendingOwner');
    assert.equal(await read('owner'), successor.address);
  });

  test('the constructor refuses a zero owner or executor', async () => {
    const wallet = walletOf(env, env.owner);
    // viem does not decode a constructor's custom error; the node reports its selector.
    const selector = toFunctionSelector('ZeroAddress()');
    for (const args of [
      [ZERO, env.executor.address],
      [env.owner.address, ZERO],
    ] as const) {
      await assert.rejects(wallet.deployContract({ ...TollgateSettlementArtifact, args }), (err: Error) => err.message.includes(selector));
    }
  });
});
