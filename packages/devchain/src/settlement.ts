// Deploys the DELEGATE settlement contract (TollgateSettlement) and the example callback adapter on
// a local chain, for the gateway's dev profile and for tests. The production contract is the same
// bytecode; only who deploys it differs.
import { ExampleCreditAdapterArtifact, TestTetherTokenArtifact, TollgateSettlementArtifact } from '@tollgate/contracts';
import { encodeDeployData, encodeFunctionData, getAddress, getContractAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { publicClientFor, sendPipelined } from './tokens.ts';

/** EIP-712 name and version of the example adapter deployed by `deploySettlement`. */
export const EXAMPLE_ADAPTER_DOMAIN = { name: 'Tollgate Example Credit', version: '1' } as const;

export interface DeploySettlementOptions {
  rpcUrl: string;
  chainId: number;
  /** Deploys both contracts and becomes the owner of both. */
  deployerKey: Hex;
  /** The account allowed to submit settlements and refunds (the gateway's SETTLEMENT_KEY). */
  executor: Address;
  /**
   * Tokens the example adapter accepts; at least one deploys the adapter, none (or absent) skips it.
   */
  adapterTokens?: readonly Address[];
}

export interface SettlementDeployment {
  /** TollgateSettlement: the chain's spent_address and core_address. */
  settlement: Address;
  owner: Address;
  executor: Address;
  /** The example callback adapter, with `settlement` allowlisted as its core. */
  adapter?: { address: Address; eip712Name: string; eip712Version: string };
}

// The adapter's setAcceptedToken calls are sent before its deployment is mined, so they cannot be
// estimated; a first-time SSTORE plus the event measured ~47k, 80k leaves headroom.
const SET_TOKEN_GAS = 80_000n;

/**
 * Deploys TollgateSettlement (owner = deployer, executor = `executor`) and, when `adapterTokens` is
 * given, an ExampleCreditAdapter that allowlists the settlement contract and accepts those tokens.
 * All transactions are pipelined (one block under interval mining).
 *
 * @example
 * const dep = await deploySettlement({ rpcUrl: chain.rpcUrl, chainId: chain.chainId,
 *   deployerKey: chain.deployer.privateKey, executor: executorAccount.address,
 *   adapterTokens: chain.tokens.map((t) => t.address) });
 * dep.settlement;       // payToAddress of DELEGATE orders
 * dep.adapter!.address; // register as callback_contract with dep.adapter!.eip712Name/eip712Version
 */
export async function deploySettlement(opts: DeploySettlementOptions): Promise<SettlementDeployment> {
  const client = publicClientFor(opts.rpcUrl, opts.chainId);
  const account = privateKeyToAccount(opts.deployerKey);
  const nonce = await client.getTransactionCount({ address: account.address, blockTag: 'pending' });
  const settlement = getContractAddress({ from: account.address, nonce: BigInt(nonce) });

  const settlementData = encodeDeployData({ ...TollgateSettlementArtifact, args: [account.address, opts.executor] });
  const txs: { to?: Address; data: Hex; gas: bigint; label: string }[] = [{ data: settlementData, gas: await client.estimateGas({ account: account.address, data: settlementData }), label: 'deploy TollgateSettlement' }];
  const [firstToken, ...moreTokens] = opts.adapterTokens ?? [];
  let adapter: SettlementDeployment['adapter'];
  if (firstToken) {
    const adapterAddress = getContractAddress({ from: account.address, nonce: BigInt(nonce + 1) });
    const data = encodeDeployData({
      ...ExampleCreditAdapterArtifact,
      args: [EXAMPLE_ADAPTER_DOMAIN.name, EXAMPLE_ADAPTER_DOMAIN.version, settlement, firstToken],
    });
    // The constructor calls nothing, so it can be estimated before the settlement contract exists.
    txs.push({ data, gas: await client.estimateGas({ account: account.address, data }), label: 'deploy ExampleCreditAdapter' });
    for (const token of moreTokens) {
      txs.push({
        to: adapterAddress,
        data: encodeFunctionData({ abi: ExampleCreditAdapterArtifact.abi, functionName: 'setAcceptedToken', args: [token, true] }),
        gas: SET_TOKEN_GAS,
        label: `adapter accepts ${token}`,
      });
    }
    adapter = { address: adapterAddress, eip712Name: EXAMPLE_ADAPTER_DOMAIN.name, eip712Version: EXAMPLE_ADAPTER_DOMAIN.version };
  }
  const receipts = await sendPipelined(client, account, txs);
  if (getAddress(receipts[0]!.contractAddress ?? '0x') !== settlement) throw new Error('TollgateSettlement landed at an unexpected address');
  if (adapter && getAddress(receipts[1]!.contractAddress ?? '0x') !== adapter.address) {
    throw new Error('ExampleCreditAdapter landed at an unexpected address');
  }
  return { settlement, owner: account.address, executor: getAddress(opts.executor), ...(adapter ? { adapter } : {}) };
}

export interface DeployTestTetherOptions {
  rpcUrl: string;
  chainId: number;
  deployerKey: Hex;
  /** Default "Tether USD" / "USDT". */
  name?: string;
  symbol?: string;
}

/**
 * Deploys a TestTetherToken: 6 decimals, no permit, no EIP-3009, and no return values from
 * transfer/transferFrom/approve (like USDT on Ethereum). Fund it with `fundPayers` (open mint).
 *
 * @example
 * const usdt = await deployTestTether({ rpcUrl, chainId, deployerKey });
 * await fundPayers({ rpcUrl, chainId, tokens: [{ address: usdt }], payers: [payer], amount: 10_000_000n, minterKey: deployerKey });
 */
export async function deployTestTether(opts: DeployTestTetherOptions): Promise<Address> {
  const client = publicClientFor(opts.rpcUrl, opts.chainId);
  const account = privateKeyToAccount(opts.deployerKey);
  const data = encodeDeployData({ ...TestTetherTokenArtifact, args: [opts.name ?? 'Tether USD', opts.symbol ?? 'USDT'] });
  const [receipt] = await sendPipelined(client, account, [{ data, gas: await client.estimateGas({ account: account.address, data }), label: 'deploy TestTetherToken' }]);
  return getAddress(receipt!.contractAddress ?? '0x');
}
