// eth_getLogs for many merchant wallets (issue #25 item 4): the receiving addresses are split into
// requests of `addressesPerQuery`, and a few of those requests are in flight at once (a tick at
// 10,000 wallets is 50 requests per range; one after the other they made detection take seconds).
// Real anvil behind the devchain proxy, which delays every answer so that the overlap is certain.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rpcRequest, startDevChain, startRpcProxy, transferToken, type DevChain, type RpcProxy } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { createChainRpc } from '../../src/chain/evm/rpc.ts';

describe('eth_getLogs for many wallets', () => {
  let dev: DevChain;
  let proxy: RpcProxy;
  before(async () => {
    dev = await startDevChain();
    proxy = await startRpcProxy(dev.rpcUrl);
  });
  after(async () => {
    await proxy?.close();
    await dev?.stop();
  });

  it('splits 100 wallets into 10 requests, 4 in flight at a time, and finds the transfers of every chunk', async () => {
    const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
    const wallets = Array.from({ length: 100 }, (_, i) => `0x${(0xbee000n + BigInt(i)).toString(16).padStart(40, '0')}` as Hex);
    const paid = [wallets[3]!, wallets[47]!, wallets[99]!]; // first, fifth and last request
    const from = BigInt(await rpcRequest<Hex>(dev.rpcUrl, 'eth_blockNumber', [])) + 1n;
    for (const [i, to] of paid.entries()) await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: dev.payers[0]!.privateKey, token: usdc.address, to, amount: 1_000n + BigInt(i) });
    const rpc = createChainRpc({ chainId: dev.chainId, rpcUrl: proxy.url }, { addressesPerQuery: 10 });
    const head = await rpc.getHead();
    proxy.set({ mode: 'delay', delayMs: 150 });
    const before = proxy.stats();
    const logs = await rpc.getTransferLogs({ tokens: [usdc.address.toLowerCase() as Hex], to: wallets, fromBlock: from, toBlock: head.number });
    const after = proxy.stats();
    proxy.set({ mode: 'pass' });
    assert.deepEqual(logs.map((l) => [l.to, l.value]).sort(), paid.map((to, i) => [to, 1_000n + BigInt(i)]).sort());
    assert.equal((after.calls.eth_getLogs ?? 0) - (before.calls.eth_getLogs ?? 0), 10, 'one request per 10 wallets');
    assert.equal(after.maxInFlight, 4, 'four requests at once, never more');
  });
});
