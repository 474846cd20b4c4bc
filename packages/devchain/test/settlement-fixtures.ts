// Shared setup for the TollgateSettlement / ExampleCreditAdapter tests: one real anvil with the
// dev tokens, a USDT-like token, the settlement contract, the example adapter and a switchable test
// adapter, plus signing helpers that sign exactly what a wallet would (viem).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  ExampleCreditAdapterArtifact,
  NO_CALLBACK_DATA,
  TestCallbackAdapterArtifact,
  TestTetherTokenArtifact,
  TestTokenArtifact,
  TollgateSettlementArtifact,
  buildCalldataSignRequest,
  callbackDataFor,
  orderIdToBytes32,
  toSignableTypedData,
  type SettlementCallbackData,
} from '@tollgate/contracts';
import { BaseError, ContractFunctionRevertedError, createPublicClient, createWalletClient, getAddress, http, parseSignature, toHex, type Abi, type Address, type Hex, type TransactionReceipt } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { deploySettlement, deployTestTether, fundPayers, localChain, startDevChain, type DevChain } from '../src/index.ts';

const errorsOf = (abi: Abi) => abi.filter((e) => e.type === 'error');
/** The settlement ABI plus every error a token or adapter can bubble through it, so viem names them. */
export const SETTLEMENT_ABI = [...TollgateSettlementArtifact.abi, ...errorsOf(TestTokenArtifact.abi), ...errorsOf(TestCallbackAdapterArtifact.abi), ...errorsOf(ExampleCreditAdapterArtifact.abi)] as const;
export const ADAPTER_ABI = [...ExampleCreditAdapterArtifact.abi, ...errorsOf(TestCallbackAdapterArtifact.abi)] as const;

export type Order = {
  orderId: Hex;
  payer: Address;
  token: Address;
  amount: bigint;
  payee: Address;
  callback: boolean;
};
export type CallbackData = SettlementCallbackData;
export const NO_CALLBACK = NO_CALLBACK_DATA;

export interface SettlementEnv {
  dev: DevChain;
  client: ReturnType<typeof makeClient>;
  owner: PrivateKeyAccount;
  executor: PrivateKeyAccount;
  payer: PrivateKeyAccount;
  stranger: PrivateKeyAccount;
  usdc: Address;
  usdt: Address;
  settlement: Address;
  adapter: Address;
  testAdapter: Address;
  merchant: Address;
  stop(): Promise<void>;
}

function makeClient(dev: DevChain) {
  return createPublicClient({ chain: localChain(dev.rpcUrl, dev.chainId), transport: http(dev.rpcUrl), pollingInterval: 20 });
}

export function walletOf(env: SettlementEnv, account: PrivateKeyAccount) {
  return createWalletClient({ account, chain: localChain(env.dev.rpcUrl, env.dev.chainId), transport: http(env.dev.rpcUrl) });
}

/** Starts a fresh chain: owner = anvil #0, executor = #9, payer = #1, stranger = #2. */
export async function startSettlementEnv(): Promise<SettlementEnv> {
  const dev = await startDevChain();
  const client = makeClient(dev);
  const [owner, executor, payer, stranger] = [dev.deployer, dev.payers[8]!, dev.payers[0]!, dev.payers[1]!].map((a) => privateKeyToAccount(a.privateKey)) as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount];
  const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!.address;
  const usdt = await deployTestTether({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, deployerKey: dev.deployer.privateKey });
  await fundPayers({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, tokens: [{ address: usdt }], payers: [payer.address, stranger.address], amount: 1_000_000_000n, minterKey: dev.deployer.privateKey });
  const dep = await deploySettlement({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, deployerKey: dev.deployer.privateKey, executor: executor.address, adapterTokens: [usdc, usdt] });
  const wallet = createWalletClient({ account: owner, chain: localChain(dev.rpcUrl, dev.chainId), transport: http(dev.rpcUrl) });
  const hash = await wallet.deployContract({ ...TestCallbackAdapterArtifact });
  const testAdapter = getAddress((await client.waitForTransactionReceipt({ hash })).contractAddress!);
  const merchant = privateKeyToAccount(toHex(randomBytes(32))).address;
  return { dev, client, owner, executor, payer, stranger, usdc, usdt, settlement: dep.settlement, adapter: dep.adapter!.address, testAdapter, merchant, stop: () => dev.stop() };
}

export const freshOrderId = (): Hex => orderIdToBytes32(`ord_${randomBytes(12).toString('hex')}`);
export const nowSeconds = async (env: SettlementEnv) => (await env.client.getBlock()).timestamp;

export function buildOrder(env: SettlementEnv, overrides: Partial<Order> = {}): Order {
  return { orderId: freshOrderId(), payer: env.payer.address, token: env.usdc, amount: 2_500_000n, payee: env.merchant, callback: false, ...overrides };
}

export const balanceOf = (env: SettlementEnv, token: Address, who: Address) => env.client.readContract({ address: token, abi: TestTokenArtifact.abi, functionName: 'balanceOf', args: [who] });

export const orderState = (env: SettlementEnv, orderId: Hex) => env.client.readContract({ address: env.settlement, abi: SETTLEMENT_ABI, functionName: 'orderState', args: [orderId] });

/** The payer sends `amount` of `token` to the settlement contract (a plain transfer into the pool). */
export async function payIntoPool(env: SettlementEnv, token: Address, amount: bigint, from = env.payer): Promise<TransactionReceipt> {
  const abi = token === env.usdt ? TestTetherTokenArtifact.abi : TestTokenArtifact.abi;
  const hash = await walletOf(env, from).writeContract({ address: token, abi, functionName: 'transfer', args: [env.settlement, amount] });
  const receipt = await env.client.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
  return receipt;
}

/** The payer approves the settlement contract for `amount` (USDT-like tokens return nothing). */
export async function approveSettlement(env: SettlementEnv, token: Address, amount: bigint): Promise<void> {
  const abi = token === env.usdt ? TestTetherTokenArtifact.abi : TestTokenArtifact.abi;
  const hash = await walletOf(env, env.payer).writeContract({ address: token, abi, functionName: 'approve', args: [env.settlement, amount] });
  assert.equal((await env.client.waitForTransactionReceipt({ hash })).status, 'success');
}

type SettlementFn = 'settle' | 'settleWithAuthorization' | 'settleWithPermit' | 'settleFromAllowance' | 'refund' | 'setExecutor' | 'setPaused' | 'transferOwnership' | 'acceptOwnership';

/** Sends a settlement-contract call as `from` and returns the successful receipt. */
export async function send(env: SettlementEnv, from: PrivateKeyAccount, functionName: SettlementFn, args: readonly unknown[]): Promise<TransactionReceipt> {
  const hash = await walletOf(env, from).writeContract({ address: env.settlement, abi: SETTLEMENT_ABI, functionName, args } as never);
  const receipt = await env.client.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success', `${functionName} reverted`);
  return receipt;
}

/** Mines the call as a transaction with a fixed gas limit (no estimation), expecting it to revert on chain. */
export async function sendReverting(env: SettlementEnv, from: PrivateKeyAccount, functionName: SettlementFn, args: readonly unknown[]): Promise<void> {
  const hash = await walletOf(env, from).writeContract({ address: env.settlement, abi: SETTLEMENT_ABI, functionName, args, gas: 1_000_000n } as never);
  assert.equal((await env.client.waitForTransactionReceipt({ hash })).status, 'reverted');
}

/** Simulates the call as `from` and asserts it reverts with custom error `errorName`; returns the error's args. */
export async function expectRevert(env: SettlementEnv, from: PrivateKeyAccount, functionName: SettlementFn, args: readonly unknown[], errorName: string): Promise<readonly unknown[]> {
  return expectRevertOf(env.client.simulateContract({ account: from, address: env.settlement, abi: SETTLEMENT_ABI, functionName, args } as never), errorName);
}

export async function expectRevertOf(promise: Promise<unknown>, errorName: string): Promise<readonly unknown[]> {
  let found: readonly unknown[] = [];
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof BaseError, `not a viem error: ${String(err)}`);
    const revert = err.walk((e) => e instanceof ContractFunctionRevertedError);
    assert.ok(revert instanceof ContractFunctionRevertedError, `no revert in: ${err.shortMessage}`);
    assert.equal(revert.data?.errorName, errorName, `reverted with ${revert.data?.errorName ?? revert.shortMessage}`);
    found = revert.data?.args ?? [];
    return true;
  });
  return found;
}

/** The payer signs the order's Eip3009CallbackData under `adapter`'s domain (as a wallet would). */
export async function signCallback(env: SettlementEnv, order: Order, opts: { data: Hex; adapter?: Address; name?: string; version?: string; deadline?: bigint; signer?: PrivateKeyAccount; orderIdText?: string }): Promise<CallbackData> {
  const deadline = opts.deadline ?? (await nowSeconds(env)) + 3600n;
  const calldataNonce = BigInt(toHex(randomBytes(8)));
  const adapter = opts.adapter ?? env.adapter;
  const isExample = adapter === env.adapter;
  const request = buildCalldataSignRequest({
    chainId: env.dev.chainId,
    callbackContract: adapter,
    eip712Name: opts.name ?? (isExample ? 'Tollgate Example Credit' : 'Tollgate Test Adapter'),
    eip712Version: opts.version ?? '1',
    token: order.token,
    spentAddress: env.settlement,
    payer: order.payer,
    amount: order.amount,
    orderId: opts.orderIdText ?? 'unused',
    calldataNonce,
    deadline,
    calldata: opts.data,
  });
  // The order id of a test order is already hashed; sign the bytes32 the contract sees.
  const typed = toSignableTypedData(request);
  const message = { ...typed.message, orderId: opts.orderIdText ? typed.message.orderId : order.orderId };
  const signature = await (opts.signer ?? env.payer).signTypedData({ ...typed, message });
  return callbackDataFor(request, opts.data, signature);
}

/** EIP-3009 ReceiveWithAuthorization from the payer to the settlement contract, split for the contract call. */
export async function signReceiveAuthorization(env: SettlementEnv, order: Order, opts: { value?: bigint; validBefore?: bigint; signer?: PrivateKeyAccount } = {}) {
  const message = { from: order.payer, to: env.settlement, value: opts.value ?? order.amount, validAfter: 0n, validBefore: opts.validBefore ?? (await nowSeconds(env)) + 3600n, nonce: toHex(randomBytes(32)) };
  const sig = parseSignature(
    await (opts.signer ?? env.payer).signTypedData({
      domain: { name: 'USD Coin', version: '2', chainId: env.dev.chainId, verifyingContract: order.token },
      types: {
        ReceiveWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'ReceiveWithAuthorization',
      message,
    }),
  );
  return { validAfter: message.validAfter, validBefore: message.validBefore, nonce: message.nonce, v: Number(sig.v), r: sig.r, s: sig.s };
}

/** EIP-2612 permit from the payer to the settlement contract. */
export async function signPermit(env: SettlementEnv, order: Order, opts: { deadline?: bigint } = {}) {
  const nonce = await env.client.readContract({ address: order.token, abi: TestTokenArtifact.abi, functionName: 'nonces', args: [order.payer] });
  const deadline = opts.deadline ?? (await nowSeconds(env)) + 3600n;
  const sig = parseSignature(
    await env.payer.signTypedData({
      domain: { name: 'USD Coin', version: '2', chainId: env.dev.chainId, verifyingContract: order.token },
      types: {
        Permit: [
          { name: 'owner', type: 'address' },
          { name: 'spender', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'nonce', type: 'uint256' },
          { name: 'deadline', type: 'uint256' },
        ],
      },
      primaryType: 'Permit',
      message: { owner: order.payer, spender: env.settlement, value: order.amount, nonce, deadline },
    }),
  );
  return { value: order.amount, deadline, v: Number(sig.v), r: sig.r, s: sig.s };
}
