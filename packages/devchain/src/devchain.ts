// One call that gives `npm start` and integration tests a ready chain: anvil, two test
// stablecoins, nine funded payers.
import { parseUnits } from 'viem';
import { startAnvil, type AnvilHandle, type DevAccount } from './anvil.ts';
import { setIntervalMining } from './testing.ts';
import { deployTestTokens, fundPayers, type TestTokenInfo, type UsdtFlavour } from './tokens.ts';

export interface StartDevChainOptions {
  /** 0 or absent: a free port chosen by the OS. */
  port?: number;
  /** Default 31337. */
  chainId?: number;
  /** Seconds between blocks; absent: automine (a block per transaction). */
  blockTime?: number;
  /** Base units minted to each payer of each token. Default 1,000,000 tokens (1_000_000_000_000n). */
  fundAmount?: bigint;
  /** Which contract plays USDT; default 'eip3009' (a TestToken, as before). See UsdtFlavour. */
  usdt?: UsdtFlavour;
  /** See StartAnvilOptions.ownProcessGroup. */
  ownProcessGroup?: boolean;
}

export interface DevChain {
  rpcUrl: string;
  chainId: number;
  /** USDC then USDT. */
  tokens: TestTokenInfo[];
  /** Anvil accounts 1..9, each funded with `fundAmount` of every token. */
  payers: DevAccount[];
  /** Anvil account 0: deployed the tokens; holds no tokens. */
  deployer: DevAccount;
  anvil: AnvilHandle;
  stop(): Promise<void>;
}

/** 1,000,000 tokens at 6 decimals. */
export const DEFAULT_FUND_AMOUNT = parseUnits('1000000', 6);

/**
 * Starts anvil, deploys TestUSDC and TestUSDT from account 0, and mints `fundAmount` of both to
 * accounts 1..9. Measured ~0.2 s here.
 *
 * Setup always runs under automine, and interval mining (`blockTime`) is switched on afterwards:
 * with `--block-time 2` from the start, setup would wait two blocks (4 s) for its receipts.
 *
 * @example
 * const chain = await startDevChain();
 * try {
 *   const usdc = chain.tokens.find((t) => t.symbol === 'USDC')!;
 *   await transferToken({ rpcUrl: chain.rpcUrl, chainId: chain.chainId, privateKey: chain.payers[0]!.privateKey,
 *     token: usdc.address, to: merchantAddress, amount: 2_500_000n });
 * } finally {
 *   await chain.stop();
 * }
 */
export async function startDevChain(opts: StartDevChainOptions = {}): Promise<DevChain> {
  const anvil = await startAnvil({
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    ...(opts.chainId !== undefined ? { chainId: opts.chainId } : {}),
    ...(opts.ownProcessGroup ? { ownProcessGroup: true } : {}),
  });
  try {
    const [deployer, ...payers] = anvil.accounts;
    if (!deployer) throw new Error('anvil returned no accounts');
    const { rpcUrl, chainId } = anvil;
    const tokens = await deployTestTokens({ rpcUrl, chainId, deployerKey: deployer.privateKey, ...(opts.usdt ? { usdt: opts.usdt } : {}) });
    await fundPayers({
      rpcUrl,
      chainId,
      tokens,
      payers: payers.map((p) => p.address),
      amount: opts.fundAmount ?? DEFAULT_FUND_AMOUNT,
      minterKey: deployer.privateKey,
    });
    if (opts.blockTime !== undefined) await setIntervalMining(rpcUrl, opts.blockTime);
    return { rpcUrl, chainId, tokens, payers, deployer, anvil, stop: () => anvil.stop() };
  } catch (err) {
    await anvil.stop();
    throw err;
  }
}
