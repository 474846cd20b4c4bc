import { createPublicClient, parseAbi, type Hex, type PublicClient } from 'viem';
import type { ChainConfig, TokenConfig } from '../../config/schema.ts';
import type { ChainLogger } from './context.ts';
import { describeError } from './rpc.ts';
import { chainTransport, rpcPool } from './transport.ts';

/**
 * The start-up check of the EVM chains (called by main.ts before anything is built):
 *
 * - every RPC URL of every chain that answers must serve the configured chain id; one that serves
 *   another is a configuration mistake, and Tollgate refuses to start naming it (at run time the
 *   transport refuses such a URL too, transport.ts). An unreachable URL is only a warning: the
 *   transport fails over, and a provider may come back;
 * - a chain enabled with `"preset"` is compared with the chain: code at each token address,
 *   `decimals()`, the EIP-3009 / EIP-2612 / EIP-712 facts the config states; facts the preset
 *   leaves uncertain (`readFromChain`) are read and written into the token's config before any
 *   service reads it. Any disagreement refuses the start with one line.
 */
class ChainCheckError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChainCheckError';
  }
}

const abi = parseAbi([
  'function decimals() view returns (uint8)',
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function nonces(address owner) view returns (uint256)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
]);

const ZERO_ADDRESS: Hex = '0x0000000000000000000000000000000000000000';
const ZERO_WORD: Hex = `0x${'0'.repeat(64)}`;

/**
 * Checks every EVM chain of the config; throws {@link ChainCheckError} on the first disagreement.
 *
 * @example await checkEvmChains(config.chains, log); // "chain 56 (BNB Smart Chain): USDC 0x8ac7… has 6 decimals, the preset says 18"
 */
export async function checkEvmChains(chains: readonly ChainConfig[], log: ChainLogger): Promise<void> {
  await Promise.all(chains.map((c) => checkChain(c, log)));
}

async function checkChain(chain: ChainConfig, log: ChainLogger): Promise<void> {
  const at = `chain ${chain.chainId} (${chain.name})`;
  const probes = await rpcPool(chain).probeAll();
  for (const p of probes) {
    if (p.chainId !== undefined && p.chainId !== chain.chainId) throw new ChainCheckError(`${at}: RPC URL ${p.url} serves chain ${p.chainId}`);
    if (!p.ok) log.warn('RPC URL unreachable at start-up', { chain_id: chain.chainId, url: p.url, error: p.error });
  }
  if (chain.preset === undefined) return;
  if (!probes.some((p) => p.ok)) throw new ChainCheckError(`${at}: cannot check preset ${chain.preset}: no RPC URL answered (${probes.map((p) => `${p.url}: ${p.error}`).join('; ')})`);
  const client = createPublicClient({ transport: chainTransport(chain) });
  for (const token of chain.tokens) {
    try {
      await checkToken(client, chain, token, `${at}: ${token.symbol} ${token.address}`);
    } catch (err) {
      if (err instanceof ChainCheckError) throw err;
      throw new ChainCheckError(`${at}: cannot check ${token.symbol} ${token.address}: ${describeError(err)}`);
    }
  }
}

async function checkToken(client: PublicClient, chain: ChainConfig, token: TokenConfig, at: string): Promise<void> {
  const address = token.address;
  const code = await client.getCode({ address });
  if (!code || code === '0x') throw new ChainCheckError(`${at} has no contract code`);
  const decimals = await attempt(client.readContract({ address, abi, functionName: 'decimals' }));
  if (decimals === undefined) throw new ChainCheckError(`${at} has no decimals()`);
  if (decimals !== token.decimals) throw new ChainCheckError(`${at} has ${decimals} decimals, the config says ${token.decimals}`);

  const read = new Set(token.readFromChain ?? []);
  if (token.eip3009 || read.has('eip3009')) {
    // EIP-3009's view function: present on every implementation, reverts (no selector) elsewhere.
    const has3009 = (await attempt(client.readContract({ address, abi, functionName: 'authorizationState', args: [ZERO_ADDRESS, ZERO_WORD] }))) !== undefined;
    if (token.eip3009 && !has3009) throw new ChainCheckError(`${at} has no EIP-3009 (authorizationState reverts), the config says it has`);
    if (read.has('eip3009')) token.eip3009 = has3009;
  }
  if (token.eip2612 || read.has('eip2612')) {
    const [nonces, separator] = await Promise.all([attempt(client.readContract({ address, abi, functionName: 'nonces', args: [ZERO_ADDRESS] })), attempt(client.readContract({ address, abi, functionName: 'DOMAIN_SEPARATOR' }))]);
    const has2612 = nonces !== undefined && separator !== undefined;
    if (token.eip2612 && !has2612) throw new ChainCheckError(`${at} has no EIP-2612 (nonces/DOMAIN_SEPARATOR revert), the config says it has`);
    if (read.has('eip2612')) token.eip2612 = has2612;
  }
  if (token.eip712 || read.has('eip712')) {
    const domain = await domainOf(client, address);
    if (token.eip712) {
      if (!domain) throw new ChainCheckError(`${at} has no readable EIP-712 domain, the config says "${token.eip712.name}" / "${token.eip712.version}"`);
      if (domain.name !== token.eip712.name || domain.version !== token.eip712.version) {
        throw new ChainCheckError(`${at} has EIP-712 domain "${domain.name}" / "${domain.version}", the config says "${token.eip712.name}" / "${token.eip712.version}"`);
      }
      if (domain.chainId !== undefined && domain.chainId !== BigInt(chain.chainId)) throw new ChainCheckError(`${at} signs for chain ${domain.chainId} (eip712Domain)`);
    } else if (domain) token.eip712 = { name: domain.name, version: domain.version };
  }
  delete token.readFromChain;
}

/** EIP-5267 `eip712Domain()` when the token has it, else `name()` + `version()`; undefined when neither answers. */
async function domainOf(client: PublicClient, address: Hex): Promise<{ name: string; version: string; chainId?: bigint } | undefined> {
  const d = await attempt(client.readContract({ address, abi, functionName: 'eip712Domain' }));
  if (d) return { name: d[1], version: d[2], chainId: d[3] };
  const [name, version] = await Promise.all([attempt(client.readContract({ address, abi, functionName: 'name' })), attempt(client.readContract({ address, abi, functionName: 'version' }))]);
  return name !== undefined && version !== undefined ? { name, version } : undefined;
}

/**
 * The call's result, or undefined when the contract reverted (the function is missing); a transport
 * failure is rethrown: "could not ask" must not read as "has no such function".
 */
async function attempt<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name === 'ContractFunctionExecutionError') {
      const cause = (err as { cause?: { name?: string } }).cause;
      if (cause?.name === 'ContractFunctionRevertedError' || cause?.name === 'ContractFunctionZeroDataError') return undefined;
    }
    throw err;
  }
}
