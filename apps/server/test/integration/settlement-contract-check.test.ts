// The settlement contract check (settlement/contract-check.ts) against a real anvil with the real
// TollgateSettlement: the shipped code with our executor passes; another contract's code, no code,
// another executor, an RPC of another chain are refused, each with its own code; a paused contract
// is a warning; and `tollgate serve` refuses to start on a mismatch with one line naming the chain.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestTokenArtifact, TollgateSettlementArtifact } from '@tollgate/contracts';
import { deploySettlement, type DevChain } from '@tollgate/devchain';
import { createPublicClient, createWalletClient, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { SettlementSigner } from '../../src/config/schema.ts';
import { checkSettlementContract, runtimeCodeMatches, SettlementContractError, verifySettlementContracts } from '../../src/settlement/contract-check.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { TEST_ADMIN_TOKEN } from '../helpers/server.ts';
import { chainConfigOf, randomAddress, startTestChain } from './watcher-fixtures.ts';

describe('settlement contract check (anvil)', () => {
  let dev: DevChain;
  let client: ReturnType<typeof createPublicClient>;
  let settlement: Hex;
  const executorKey = () => dev.payers[8]!.privateKey;
  const executor = () => privateKeyToAccount(executorKey()).address;
  const dir = mkdtempSync(join(tmpdir(), 'tg-contract-check-'));

  before(async () => {
    dev = await startTestChain();
    client = createPublicClient({ transport: http(dev.rpcUrl) });
    settlement = (await deploySettlement({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, deployerKey: dev.deployer.privateKey, executor: executor() })).settlement;
  });
  after(async () => {
    await dev?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const setPaused = async (paused: boolean) => {
    const wallet = createWalletClient({ account: privateKeyToAccount(dev.deployer.privateKey), transport: http(dev.rpcUrl) });
    const hash = await wallet.writeContract({ chain: null, address: settlement, abi: TollgateSettlementArtifact.abi, functionName: 'setPaused', args: [paused] });
    assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
  };

  it('the shipped code with our executor: ok, with owner, executor and no pending owner', async () => {
    const r = await checkSettlementContract(client, { chainId: dev.chainId, address: settlement, expectedExecutor: executor() });
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.equal(r.problem, undefined);
    assert.deepEqual(r.state, { owner: dev.deployer.address.toLowerCase(), pendingOwner: null, executor: executor().toLowerCase(), paused: false });
    assert.deepEqual(r.warnings, []);
    // The artifact's runtime code is what a deployment leaves (no immutables to mask).
    assert.equal((await client.getCode({ address: settlement }))?.toLowerCase(), TollgateSettlementArtifact.deployedBytecode.toLowerCase());
  });

  it('each mismatch has its own code and a message naming it', async () => {
    const token = dev.tokens[0]!.address;
    const cases: [opts: { chainId: number; address: Hex; expectedExecutor: Hex }, code: string, message: RegExp][] = [
      [{ chainId: dev.chainId, address: token, expectedExecutor: executor() }, 'code_mismatch', /not the shipped TollgateSettlement/],
      [{ chainId: dev.chainId, address: randomAddress(), expectedExecutor: executor() }, 'no_code', /no contract code/],
      [{ chainId: dev.chainId, address: settlement, expectedExecutor: dev.payers[7]!.address }, 'executor_mismatch', new RegExp(`its executor is ${executor().toLowerCase()}`)],
      [{ chainId: dev.chainId + 1, address: settlement, expectedExecutor: executor() }, 'wrong_chain', new RegExp(`serves chain ${dev.chainId}, not ${dev.chainId + 1}`)],
    ];
    for (const [opts, code, message] of cases) {
      const r = await checkSettlementContract(client, opts);
      assert.equal(r.ok, false, code);
      assert.equal(r.problem?.code, code);
      assert.match(r.problem!.message, message);
    }
    const down = await checkSettlementContract(createPublicClient({ transport: http('http://127.0.0.1:9/', { retryCount: 0, timeout: 2000 }) }), { chainId: dev.chainId, address: settlement, expectedExecutor: executor() });
    assert.equal(down.problem?.code, 'unreachable');
  });

  it('one flipped byte, or code of another length, does not match', () => {
    const code = TollgateSettlementArtifact.deployedBytecode;
    const flipped = `${code.slice(0, 100)}${code[100] === '0' ? '1' : '0'}${code.slice(101)}` as Hex;
    assert.equal(runtimeCodeMatches(code, TollgateSettlementArtifact), true);
    assert.equal(runtimeCodeMatches(flipped, TollgateSettlementArtifact), false);
    assert.equal(runtimeCodeMatches(`${code}00`, TollgateSettlementArtifact), false);
    // Immutable ranges are masked: the same flip inside a declared range matches.
    assert.equal(runtimeCodeMatches(flipped, { ...TollgateSettlementArtifact, immutableReferences: [{ start: 48, length: 4 }] }), true);
  });

  it('immutables are masked: a deployed TestToken (its EIP-712 domain is immutable) matches its artifact only with the mask', async () => {
    const code = await client.getCode({ address: dev.tokens[0]!.address });
    assert.ok(TestTokenArtifact.immutableReferences.length > 0);
    assert.equal(runtimeCodeMatches(code, TestTokenArtifact), true);
    assert.equal(runtimeCodeMatches(code, { deployedBytecode: TestTokenArtifact.deployedBytecode }), false, 'the constructor filled the ranges in');
  });

  it('start-up: a paused contract is a warning; a wrong executor throws one line naming the chain', async () => {
    const chain = chainConfigOf(dev, { settlementContract: settlement.toLowerCase() as Hex });
    const signer = new SettlementSigner(executorKey(), executor());
    await setPaused(true);
    try {
      const warned: string[] = [];
      const checks = await verifySettlementContracts({ chains: [chain], settlement: signer }, { warn: (l) => warned.push(l) });
      assert.equal(checks[0]!.state?.paused, true);
      assert.equal(warned.length, 1);
      assert.match(warned[0]!, new RegExp(`^tollgate: warning: chain ${dev.chainId}: settlement_contract ${settlement.toLowerCase()}: the contract is paused`));
    } finally {
      await setPaused(false);
    }
    const other = new SettlementSigner(dev.payers[7]!.privateKey, dev.payers[7]!.address);
    await assert.rejects(
      verifySettlementContracts({ chains: [chain], settlement: other }, { warn: () => assert.fail('no warning expected') }),
      (err: unknown) => err instanceof SettlementContractError && err.check.problem?.code === 'executor_mismatch' && err.message.startsWith(`chain ${dev.chainId}: settlement_contract`),
    );
  });

  it('`tollgate serve` refuses to start on a settlement_contract with other code: exit 78, one line', { timeout: 240_000 }, async () => {
    const token = dev.tokens[0]!.address.toLowerCase();
    const config = join(dir, 'tollgate.json');
    writeFileSync(
      config,
      JSON.stringify({
        environment: 'test',
        chains: [{ chain_id: dev.chainId, rpc_url: dev.rpcUrl, confirmations: 1, finality_confirmations: 2, settlement_contract: token, tokens: dev.tokens.map((t) => ({ symbol: t.symbol, address: t.address.toLowerCase(), decimals: t.decimals })) }],
      }),
    );
    const proc = spawnTollgate(['serve'], {
      TOLLGATE_CONFIG: config,
      DATA_DIR: join(dir, 'data'),
      MASTER_KEY: randomBytes(32).toString('hex'),
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      SETTLEMENT_KEY: executorKey(),
      PORT: '0',
      LOG_LEVEL: 'warn',
    });
    const code = await new Promise<number | null>((resolve) => proc.child.once('exit', resolve));
    assert.equal(code, 78, proc.output());
    const lines = proc.output().trim().split('\n');
    assert.equal(lines.length, 1, proc.output());
    assert.equal(
      lines[0],
      `tollgate: chain ${dev.chainId}: settlement_contract ${token}: the code at this address is not the shipped TollgateSettlement (${((await client.getCode({ address: token as Hex }))!.length - 2) / 2} bytes, expected ${(TollgateSettlementArtifact.deployedBytecode.length - 2) / 2})`,
    );
    assert.doesNotMatch(proc.output(), new RegExp(executorKey().slice(2), 'i'), 'the key never printed');
  });
});
