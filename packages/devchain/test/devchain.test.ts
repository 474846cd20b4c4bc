// Integration tests on real anvil processes: startup, funding, transfers, reorgs, port release.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { TestTokenArtifact } from '@tollgate/contracts';
import { createPublicClient, encodeFunctionData, http, parseEventLogs, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEFAULT_ANVIL_ACCOUNTS, DEFAULT_FUND_AMOUNT, localChain, mine, reorg, rpcRequest, setAutomine, startAnvil, startDevChain, transferToken, type DevChain } from '../src/index.ts';

// cacheTime 0: viem caches eth_blockNumber for the polling interval (4 s by default), so a height
// read right after a reorg could be the one cached while waiting for the receipt (a CI flake:
// "a reorg keeps the height", 21n !== 22n).
function clientFor(chain: { rpcUrl: string; chainId: number }) {
  return createPublicClient({ chain: localChain(chain.rpcUrl, chain.chainId), transport: http(chain.rpcUrl), cacheTime: 0 });
}

/** True if something can bind 127.0.0.1:port right now. */
function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('startDevChain', () => {
  let chain: DevChain;
  let client: ReturnType<typeof clientFor>;
  const balanceOf = (token: Address, who: Address) => client.readContract({ address: token, abi: TestTokenArtifact.abi, functionName: 'balanceOf', args: [who] });

  before(async () => {
    const started = performance.now();
    chain = await startDevChain();
    const ms = performance.now() - started;
    // The budget is 5 s; ~0.2 s measured. A generous bound keeps this from flaking on a busy CI.
    assert.ok(ms < 3_000, `startDevChain took ${Math.round(ms)} ms`);
    client = clientFor(chain);
  });
  after(() => chain?.stop());

  test('deploys USDC and USDT with their real names and 6 decimals', async () => {
    assert.deepEqual(
      chain.tokens.map((t) => [t.symbol, t.name, t.decimals]),
      [
        ['USDC', 'USD Coin', 6],
        ['USDT', 'Tether USD', 6],
      ],
    );
    for (const t of chain.tokens) {
      const read = <F extends 'name' | 'symbol' | 'decimals'>(functionName: F) => client.readContract({ address: t.address, abi: TestTokenArtifact.abi, functionName });
      assert.equal(await read('name'), t.name);
      assert.equal(await read('symbol'), t.symbol);
      assert.equal(await read('decimals'), 6);
    }
  });

  test('accounts are anvil’s default accounts: deployer is #0, payers #1..#9', async () => {
    const onChain = await rpcRequest<string[]>(chain.rpcUrl, 'eth_accounts', []);
    assert.deepEqual(
      onChain.map((a) => a.toLowerCase()),
      DEFAULT_ANVIL_ACCOUNTS.map((a) => a.address.toLowerCase()),
    );
    for (const a of DEFAULT_ANVIL_ACCOUNTS) assert.equal(privateKeyToAccount(a.privateKey).address, a.address);
    assert.equal(chain.deployer.address, DEFAULT_ANVIL_ACCOUNTS[0]!.address);
    assert.deepEqual(chain.payers, DEFAULT_ANVIL_ACCOUNTS.slice(1));
  });

  test('every payer holds 1,000,000 of each token; the deployer holds none', async () => {
    assert.equal(DEFAULT_FUND_AMOUNT, 1_000_000_000_000n);
    for (const t of chain.tokens) {
      for (const p of chain.payers) assert.equal(await balanceOf(t.address, p.address), DEFAULT_FUND_AMOUNT);
      assert.equal(await balanceOf(t.address, chain.deployer.address), 0n);
    }
  });

  test('transferToken moves tokens and emits Transfer', async () => {
    const [usdc] = chain.tokens;
    const [alice, bob] = chain.payers;
    const hash = await transferToken({
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
      privateKey: alice!.privateKey,
      token: usdc!.address,
      to: bob!.address,
      amount: 1_500_000n,
    });
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    assert.equal(receipt.status, 'success');
    const [transfer] = parseEventLogs({ abi: TestTokenArtifact.abi, eventName: 'Transfer', logs: receipt.logs });
    assert.deepEqual(transfer?.args, { from: alice!.address, to: bob!.address, value: 1_500_000n });
    assert.equal(await balanceOf(usdc!.address, alice!.address), DEFAULT_FUND_AMOUNT - 1_500_000n);
    assert.equal(await balanceOf(usdc!.address, bob!.address), DEFAULT_FUND_AMOUNT + 1_500_000n);
  });

  test('reorg of depth 1 removes a mined transfer: new block hash, receipt gone, balance back', async () => {
    const usdt = chain.tokens[1]!;
    const payer = chain.payers[2]!;
    const merchant = '0x000000000000000000000000000000000000dEaD' as const;
    const hash = await transferToken({
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
      privateKey: payer.privateKey,
      token: usdt.address,
      to: merchant,
      amount: 7_000_000n,
    });
    const mined = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    assert.equal(await balanceOf(usdt.address, merchant), 7_000_000n);

    await reorg(chain.rpcUrl, 1);

    const replaced = await client.getBlock({ blockNumber: mined.blockNumber });
    assert.notEqual(replaced.hash, mined.blockHash, 'same height, different hash');
    assert.equal(replaced.transactions.length, 0);
    assert.equal(await client.getBlockNumber(), mined.blockNumber, 'a reorg keeps the height');
    await assert.rejects(client.getTransactionReceipt({ hash }), /could not be found/);
    assert.equal(await balanceOf(usdt.address, merchant), 0n);
    // Anvil drops reorged-out transactions; they do not come back from the mempool.
    await mine(chain.rpcUrl, 1);
    assert.equal(await balanceOf(usdt.address, merchant), 0n);
  });

  test('reorg can replay a raw transaction into the new blocks (moved to another block hash)', async () => {
    const usdc = chain.tokens[0]!;
    const payer = privateKeyToAccount(chain.payers[3]!.privateKey);
    const merchant = '0x000000000000000000000000000000000000bEEF' as const;
    const [nonce, fees] = await Promise.all([client.getTransactionCount({ address: payer.address }), client.estimateFeesPerGas()]);
    const raw: Hex = await payer.signTransaction({
      type: 'eip1559',
      chainId: chain.chainId,
      nonce,
      gas: 100_000n,
      ...fees,
      to: usdc.address,
      data: encodeFunctionData({ abi: TestTokenArtifact.abi, functionName: 'transfer', args: [merchant, 3_000_000n] }),
    });
    const hash = await client.sendRawTransaction({ serializedTransaction: raw });
    const first = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    await mine(chain.rpcUrl, 1); // the transfer now has 2 confirmations

    await reorg(chain.rpcUrl, 2, [[raw, 1]]); // replay it one block later than before

    const moved = await client.getTransactionReceipt({ hash });
    assert.equal(moved.blockNumber, first.blockNumber + 1n);
    assert.notEqual(moved.blockHash, first.blockHash);
    assert.equal(await balanceOf(usdc.address, merchant), 3_000_000n);
  });

  test('with automine off, a transfer waits for mine()', async () => {
    const usdc = chain.tokens[0]!;
    const payer = chain.payers[4]!;
    const merchant = '0x0000000000000000000000000000000000000B0b' as const;
    await setAutomine(chain.rpcUrl, false);
    try {
      const hash = await transferToken({
        rpcUrl: chain.rpcUrl,
        chainId: chain.chainId,
        privateKey: payer.privateKey,
        token: usdc.address,
        to: merchant,
        amount: 1n,
      });
      await assert.rejects(client.getTransactionReceipt({ hash }), /could not be found/);
      await mine(chain.rpcUrl, 1);
      assert.equal((await client.getTransactionReceipt({ hash })).status, 'success');
    } finally {
      await setAutomine(chain.rpcUrl, true);
    }
  });
});

describe('startAnvil', () => {
  test('starts in well under a second and answers with its chain id', async () => {
    const started = performance.now();
    const anvil = await startAnvil({ chainId: 4242 });
    const ms = performance.now() - started;
    try {
      assert.ok(ms < 1_500, `startAnvil took ${Math.round(ms)} ms`); // ~0.1 s measured
      assert.equal(anvil.chainId, 4242);
      assert.equal(await rpcRequest(anvil.rpcUrl, 'eth_chainId', []), '0x1092');
      assert.equal(anvil.rpcUrl, `http://127.0.0.1:${anvil.port}`);
    } finally {
      await anvil.stop();
    }
  });

  test('two dev chains run at once on different ports with separate state', async () => {
    const [a, b] = await Promise.all([startDevChain(), startDevChain({ chainId: 1337 })]);
    try {
      assert.notEqual(a.anvil.port, b.anvil.port);
      assert.equal(await clientFor(a).getChainId(), 31337);
      assert.equal(await clientFor(b).getChainId(), 1337);
      // Same deployer and nonces, so the same token addresses on both chains ...
      assert.equal(a.tokens[0]!.address, b.tokens[0]!.address);
      // ... but a transfer on one chain is invisible on the other.
      const merchant = '0x000000000000000000000000000000000000cafE' as const;
      const hash = await transferToken({
        rpcUrl: a.rpcUrl,
        chainId: a.chainId,
        privateKey: a.payers[0]!.privateKey,
        token: a.tokens[0]!.address,
        to: merchant,
        amount: 42n,
      });
      // Anvil's automine mines after eth_sendRawTransaction has returned: wait for the receipt
      // (CI flake: the balance read ran first and saw 0n).
      await clientFor(a).waitForTransactionReceipt({ hash, pollingInterval: 10 });
      const read = (c: DevChain) => clientFor(c).readContract({ address: c.tokens[0]!.address, abi: TestTokenArtifact.abi, functionName: 'balanceOf', args: [merchant] });
      assert.equal(await read(a), 42n);
      assert.equal(await read(b), 0n);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  test('stop() frees the port, which an explicit-port anvil can then take', async () => {
    const first = await startAnvil();
    assert.equal(await canBind(first.port), false, 'anvil holds the port');
    await first.stop();
    await first.stop(); // idempotent
    assert.equal(await canBind(first.port), true, 'port free after stop()');
    await assert.rejects(rpcRequest(first.rpcUrl, 'eth_chainId', [], { timeoutMs: 500 }));

    const second = await startAnvil({ port: first.port });
    try {
      assert.equal(second.port, first.port);
      assert.equal(await rpcRequest(second.rpcUrl, 'eth_chainId', []), '0x7a69');
    } finally {
      await second.stop();
    }
  });

  test('a forgotten anvil neither keeps its parent alive nor outlives it', async () => {
    // The child script never calls stop(): it must still exit, and its anvil must die with it.
    const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url));
    const script = `import { startAnvil } from ${JSON.stringify(entry)}; console.log((await startAnvil()).port);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      timeout: 10_000,
    });
    const port = Number(stdout.trim());
    assert.ok(port > 0, `child printed ${stdout}`);
    // SIGKILL from the exit hook is asynchronous; give the kernel a moment to release the socket.
    for (let i = 0; i < 50 && !(await canBind(port)); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await canBind(port), true, 'anvil of the exited parent still holds its port');
  });

  test('a taken port fails fast with anvil’s own error', async () => {
    const holder = await startAnvil();
    try {
      const started = performance.now();
      await assert.rejects(startAnvil({ port: holder.port }), (err: Error) => {
        assert.match(err.message, /anvil failed to start: anvil exited during startup/);
        assert.match(err.message, /Address already in use/);
        return true;
      });
      assert.ok(performance.now() - started < 2_000);
    } finally {
      await holder.stop();
    }
  });

  test('startDevChain with blockTime switches to interval mining after setup', async () => {
    const chain = await startDevChain({ blockTime: 1 });
    try {
      assert.equal(await rpcRequest(chain.rpcUrl, 'anvil_getAutomine', []), false);
      const client = clientFor(chain);
      const hash = await transferToken({
        rpcUrl: chain.rpcUrl,
        chainId: chain.chainId,
        privateKey: chain.payers[0]!.privateKey,
        token: chain.tokens[0]!.address,
        to: chain.deployer.address,
        amount: 1n,
      });
      const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 3_000 });
      assert.equal(receipt.status, 'success');
    } finally {
      await chain.stop();
    }
  });
});
