// deploySettlement / deployTestTether: what the gateway's dev profile and tests rely on.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ExampleCreditAdapterArtifact, TestTetherTokenArtifact, TollgateSettlementArtifact } from '@tollgate/contracts';
import { createPublicClient, http } from 'viem';
import { EXAMPLE_ADAPTER_DOMAIN, deploySettlement, deployTestTether, localChain, startDevChain, transferToken, type DevChain } from '../src/index.ts';

let chain: DevChain;
let client: ReturnType<typeof createPublicClient>;
before(async () => {
  chain = await startDevChain();
  client = createPublicClient({ chain: localChain(chain.rpcUrl, chain.chainId), transport: http(chain.rpcUrl) });
});
after(() => chain?.stop());

describe('deploySettlement', () => {
  test('settlement owned by the deployer with the given executor; adapter allowlists it and accepts every given token', async () => {
    const executor = chain.payers[8]!.address;
    const tokens = chain.tokens.map((t) => t.address);
    const dep = await deploySettlement({ rpcUrl: chain.rpcUrl, chainId: chain.chainId, deployerKey: chain.deployer.privateKey, executor, adapterTokens: tokens });
    const s = { address: dep.settlement, abi: TollgateSettlementArtifact.abi } as const;
    assert.equal(await client.readContract({ ...s, functionName: 'owner' }), chain.deployer.address);
    assert.equal(await client.readContract({ ...s, functionName: 'executor' }), executor);
    assert.equal(await client.readContract({ ...s, functionName: 'paused' }), false);
    assert.deepEqual(dep.adapter && { name: dep.adapter.eip712Name, version: dep.adapter.eip712Version }, EXAMPLE_ADAPTER_DOMAIN);
    const a = { address: dep.adapter!.address, abi: ExampleCreditAdapterArtifact.abi } as const;
    assert.equal(await client.readContract({ ...a, functionName: 'isCore', args: [dep.settlement] }), true);
    for (const token of tokens) assert.equal(await client.readContract({ ...a, functionName: 'acceptedToken', args: [token] }), true);
    assert.equal(await client.readContract({ ...a, functionName: 'owner' }), chain.deployer.address);
  });

  test('without adapter tokens only the settlement contract is deployed', async () => {
    const dep = await deploySettlement({ rpcUrl: chain.rpcUrl, chainId: chain.chainId, deployerKey: chain.deployer.privateKey, executor: chain.payers[7]!.address });
    assert.equal(dep.adapter, undefined);
    assert.notEqual(await client.getCode({ address: dep.settlement }), undefined);
  });
});

describe('deployTestTether', () => {
  test('a 6-decimal USDT-like token without permit or EIP-3009', async () => {
    const usdt = await deployTestTether({ rpcUrl: chain.rpcUrl, chainId: chain.chainId, deployerKey: chain.deployer.privateKey });
    const t = { address: usdt, abi: TestTetherTokenArtifact.abi } as const;
    assert.deepEqual([await client.readContract({ ...t, functionName: 'symbol' }), await client.readContract({ ...t, functionName: 'decimals' })], ['USDT', 6]);
    const names = TestTetherTokenArtifact.abi.flatMap((e) => (e.type === 'function' ? [e.name] : []));
    for (const missing of ['permit', 'transferWithAuthorization', 'receiveWithAuthorization']) assert.ok(!names.includes(missing as never));
    // The selector of transferWithAuthorization hits no function: the call reverts on chain.
    await assert.rejects(client.call({ to: usdt, data: '0xe3ee160e' }));
  });
});

describe("startDevChain({ usdt: 'tether' })", () => {
  test('USDT is a TestTetherToken at the usual address, funded and transferable; USDC keeps EIP-3009', async () => {
    const tether = await startDevChain({ usdt: 'tether' });
    try {
      const c = createPublicClient({ chain: localChain(tether.rpcUrl, tether.chainId), transport: http(tether.rpcUrl) });
      assert.deepEqual(
        tether.tokens.map((t) => [t.symbol, t.eip3009]),
        [
          ['USDC', true],
          ['USDT', false],
        ],
      );
      assert.deepEqual(
        chain.tokens.map((t) => [t.symbol, t.eip3009]),
        [
          ['USDC', true],
          ['USDT', true],
        ],
        'the default is unchanged',
      );
      const usdt = tether.tokens[1]!;
      assert.equal(usdt.address, chain.tokens[1]!.address);
      // transferWithAuthorization (selector 0xe3ee160e) does not exist on it.
      await assert.rejects(c.call({ to: usdt.address, data: '0xe3ee160e' }));
      const payer = tether.payers[0]!;
      const before = await c.readContract({ address: usdt.address, abi: TestTetherTokenArtifact.abi, functionName: 'balanceOf', args: [payer.address] });
      assert.equal(before, 1_000_000_000_000n);
      const hash = await transferToken({ rpcUrl: tether.rpcUrl, chainId: tether.chainId, privateKey: payer.privateKey, token: usdt.address, to: tether.payers[1]!.address, amount: 5n });
      assert.equal((await c.waitForTransactionReceipt({ hash })).status, 'success');
      assert.equal(await c.readContract({ address: usdt.address, abi: TestTetherTokenArtifact.abi, functionName: 'balanceOf', args: [payer.address] }), before - 5n);
    } finally {
      await tether.stop();
    }
  });
});
