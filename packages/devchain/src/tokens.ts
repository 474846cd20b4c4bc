// Deploys and funds the test stablecoins (TestToken artifacts from @tollgate/contracts) with viem.
import { TestTetherTokenArtifact, TestTokenArtifact } from '@tollgate/contracts';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeDeployData,
  encodeFunctionData,
  getAddress,
  http,
  type Address,
  type Chain,
  type Hash,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
  WaitForTransactionReceiptTimeoutError,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';

/** A deployed test stablecoin. */
export interface TestTokenInfo {
  symbol: 'USDC' | 'USDT';
  name: string;
  address: Address;
  decimals: 6;
  /** True when the token has EIP-3009 (and EIP-2612): always for USDC, for USDT unless `usdt: 'tether'`. */
  eip3009: boolean;
}

/**
 * Which contract plays USDT. `'eip3009'` (the default, and the only behaviour before DELEGATE
 * mode): a TestToken like USDC. `'tether'`: a TestTetherToken — no permit, no EIP-3009, no return
 * values — so both DELEGATE flows (ERC20_3009 for USDC, ERC20_APPROVE_XFER for USDT) exist locally.
 * The address is the same either way (same deployer, same nonce).
 */
export type UsdtFlavour = 'eip3009' | 'tether';

/** The tokens every dev chain gets, in deployment order. Names match the real tokens' EIP-712 names. */
export const TEST_TOKEN_SPECS = [
  { symbol: 'USDC', name: 'USD Coin' },
  { symbol: 'USDT', name: 'Tether USD' },
] as const satisfies readonly { symbol: TestTokenInfo['symbol']; name: string }[];

export interface DeployTestTokensOptions {
  rpcUrl: string;
  chainId: number;
  deployerKey: Hex;
  /** Default 'eip3009'. */
  usdt?: UsdtFlavour;
}

export interface FundPayersOptions {
  rpcUrl: string;
  chainId: number;
  tokens: readonly { address: Address }[];
  payers: readonly Address[];
  /** Base units (6 decimals: 1_000_000n is 1 token). */
  amount: bigint;
  /** Any key works: TestToken.mint is open to everyone. */
  minterKey: Hex;
}

export interface TransferTokenOptions {
  rpcUrl: string;
  chainId: number;
  privateKey: Hex;
  token: Address;
  to: Address;
  /** Base units. */
  amount: bigint;
  /**
   * The sender's nonce. Absent: the node's pending count, which under automine can lag a transfer
   * sent a moment before (two sends then share a nonce and one of them is never mined): a caller
   * sending many transfers from one account back to back counts nonces itself.
   */
  nonce?: number;
}

// Mints are sent before the token deployment is mined, so eth_estimateGas cannot price them (it
// would run against an address with no code yet). The first mint of a token measured 68.4k gas
// (totalSupply and balance both zero-to-nonzero SSTOREs), later mints 51.3k; 100k leaves headroom.
const MINT_GAS = 100_000n;

/** Anvil answers in ~1 ms; viem's 4 s default polling interval would dominate every wait. */
const POLLING_INTERVAL_MS = 20;

/**
 * A viem chain for a local node. Exported for tests that build their own viem clients.
 *
 * @example
 * const client = createPublicClient({ chain: localChain(chain.rpcUrl, chain.chainId), transport: http(chain.rpcUrl) });
 */
export function localChain(rpcUrl: string, chainId: number): Chain {
  return defineChain({
    id: chainId,
    name: `Tollgate devchain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

export function publicClientFor(rpcUrl: string, chainId: number): PublicClient<Transport, Chain> {
  return createPublicClient({ chain: localChain(rpcUrl, chainId), transport: http(rpcUrl), pollingInterval: POLLING_INTERVAL_MS });
}

/**
 * Signs and sends `txs` back to back with consecutive nonces, mines a block, then waits for all
 * receipts. For set-up on a dev chain only (it mines).
 */
export async function sendPipelined(client: PublicClient<Transport, Chain>, account: PrivateKeyAccount, txs: readonly { to?: Address; data: Hex; gas: bigint; label: string }[]): Promise<TransactionReceipt[]> {
  const [nonce, fees] = await Promise.all([client.getTransactionCount({ address: account.address, blockTag: 'pending' }), client.estimateFeesPerGas()]);
  const hashes: Hash[] = [];
  for (const [i, tx] of txs.entries()) {
    const serializedTransaction = await account.signTransaction({
      type: 'eip1559',
      chainId: client.chain.id,
      nonce: nonce + i,
      gas: tx.gas,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      ...(tx.to ? { to: tx.to } : {}),
      data: tx.data,
    });
    hashes.push(await client.sendRawTransaction({ serializedTransaction }));
  }
  // Mine them now: under interval mining set-up then costs no block time per step (the dev
  // profile's start), and under automine it also includes a transaction anvil left in the pool.
  await client.request({ method: 'evm_mine' } as never);
  const receipts = await Promise.all(hashes.map((hash) => receiptOf(client, hash)));
  receipts.forEach((r, i) => {
    if (r.status !== 'success') throw new Error(`${txs[i]!.label} reverted (tx ${r.transactionHash})`);
  });
  return receipts;
}

/** How long a sent transaction may wait for its block before the chain is nudged. */
const STALL_MS = 5_000;
const GIVE_UP_MS = 120_000;

/**
 * Waits for a transaction's receipt. Anvil's automine sometimes leaves a ready transaction in the
 * pool until the next one arrives (foundry-rs/foundry#10122, "block mining misses ready
 * transactions"); during set-up nothing else arrives, so a receipt still missing after
 * `STALL_MS` gets an empty block mined (`evm_mine`), which includes it. Harmless on a dev chain
 * under interval mining too: one extra block.
 */
async function receiptOf(client: PublicClient<Transport, Chain>, hash: Hash): Promise<TransactionReceipt> {
  const end = Date.now() + GIVE_UP_MS;
  for (;;) {
    try {
      return await client.waitForTransactionReceipt({ hash, timeout: STALL_MS });
    } catch (e) {
      if (!(e instanceof WaitForTransactionReceiptTimeoutError) || Date.now() > end) throw e;
      await client.request({ method: 'evm_mine' } as never);
    }
  }
}

const isTether = (symbol: TestTokenInfo['symbol'], usdt: UsdtFlavour | undefined) => symbol === 'USDT' && usdt === 'tether';

/**
 * Deploys TestUSDC ("USD Coin", USDC) and TestUSDT ("Tether USD", USDT), 6 decimals each, and
 * waits for both receipts.
 *
 * @example
 * const tokens = await deployTestTokens({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, deployerKey: anvil.accounts[0]!.privateKey });
 * const usdc = tokens.find((t) => t.symbol === 'USDC')!.address;
 */
export async function deployTestTokens(opts: DeployTestTokensOptions): Promise<TestTokenInfo[]> {
  const client = publicClientFor(opts.rpcUrl, opts.chainId);
  const account = privateKeyToAccount(opts.deployerKey);
  const txs = await Promise.all(
    TEST_TOKEN_SPECS.map(async (spec) => {
      const data = isTether(spec.symbol, opts.usdt) ? encodeDeployData({ ...TestTetherTokenArtifact, args: [spec.name, spec.symbol] }) : encodeDeployData({ ...TestTokenArtifact, args: [spec.name, spec.symbol] });
      // A deployment depends on no earlier transaction, so it can be estimated up front.
      const gas = await client.estimateGas({ account: account.address, data });
      return { data, gas, label: `deploy ${spec.symbol}` };
    }),
  );
  const receipts = await sendPipelined(client, account, txs);
  return TEST_TOKEN_SPECS.map((spec, i) => {
    const address = receipts[i]!.contractAddress;
    if (!address) throw new Error(`deploy ${spec.symbol}: receipt has no contract address`);
    return { symbol: spec.symbol, name: spec.name, address: getAddress(address), decimals: 6 as const, eip3009: !isTether(spec.symbol, opts.usdt) };
  });
}

/**
 * Mints `amount` of every token to every payer (one pipelined batch) and waits for the receipts.
 *
 * @example
 * await fundPayers({ rpcUrl, chainId, tokens, payers: [payer.address], amount: 500_000_000n, minterKey: deployer.privateKey });
 */
export async function fundPayers(opts: FundPayersOptions): Promise<void> {
  const client = publicClientFor(opts.rpcUrl, opts.chainId);
  const account = privateKeyToAccount(opts.minterKey);
  const txs = opts.tokens.flatMap((token) =>
    opts.payers.map((payer) => ({
      to: token.address,
      data: encodeFunctionData({ abi: TestTokenArtifact.abi, functionName: 'mint', args: [payer, opts.amount] }),
      gas: MINT_GAS,
      label: `mint ${opts.amount} of ${token.address} to ${payer}`,
    })),
  );
  if (txs.length > 0) await sendPipelined(client, account, txs);
}

/**
 * Sends an ERC-20 `transfer` and returns its hash without waiting for a receipt (under automine
 * it is already mined when this resolves; under interval mining, wait for it yourself).
 *
 * @example
 * const hash = await transferToken({ rpcUrl, chainId, privateKey: payer.privateKey, token: usdc, to: merchant, amount: 1_500_000n });
 */
export async function transferToken(opts: TransferTokenOptions): Promise<Hash> {
  const wallet = createWalletClient({
    account: privateKeyToAccount(opts.privateKey),
    chain: localChain(opts.rpcUrl, opts.chainId),
    transport: http(opts.rpcUrl),
  });
  return wallet.writeContract({
    address: opts.token,
    abi: TestTokenArtifact.abi,
    functionName: 'transfer',
    args: [opts.to, opts.amount],
    ...(opts.nonce !== undefined ? { nonce: opts.nonce } : {}),
  });
}
