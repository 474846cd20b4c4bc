import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { TollgateSettlementArtifact } from '@tollgate/contracts';
import { createPublicClient, createWalletClient, getAddress, http, isAddress, isHex, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { loadCliSettings } from '../config/cli.ts';
import { checkSettlementContract, describeSettlementCheck } from '../settlement/contract-check.ts';
import { refusalOf } from '../settlement/revert-reason.ts';
import { AdminClient, CliError } from './client.ts';
import { print } from './print.ts';
import { SETTLEMENT_USAGE } from './settlement-usage.ts';

/**
 * `tollgate settlement …`: the lifecycle of a chain's TollgateSettlement. Two kinds of command,
 * by who holds the key:
 *   - status, pending: read through the running gateway's admin API (it has the RPC URL and the
 *     executor; GET /admin/v1/chains/{id}/settlement), like every other admin command;
 *   - deploy, pause, unpause, rotate-executor, transfer-ownership, accept-ownership: signed by the
 *     contract's OWNER, a key the gateway never holds (only the executor key is in its config). So
 *     these go from this process straight to the chain (`--rpc-url`), with the owner key from a file
 *     (`--owner-key-file`), the OWNER_KEY environment variable, or a prompt. Nothing is written to
 *     disk; the key is never printed.
 */
type OwnerCall = { functionName: 'setPaused'; args: [boolean] } | { functionName: 'setExecutor' | 'transferOwnership'; args: [Hex] } | { functionName: 'acceptOwnership'; args: [] };

export async function runSettlementCommand(argv: string[]): Promise<void> {
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      chain: { type: 'string' },
      'rpc-url': { type: 'string' },
      contract: { type: 'string' },
      executor: { type: 'string' },
      'owner-key-file': { type: 'string' },
    },
  });
  const [, sub, arg] = pos;
  const need = (v: string | undefined, what: string): string => {
    if (!v) throw new CliError(`missing ${what}\n\n${SETTLEMENT_USAGE}`);
    return v;
  };
  const chainId = Number(need(o.chain, '--chain'));
  if (!Number.isInteger(chainId) || chainId < 1) throw new CliError('--chain must be a positive integer chain id');
  const address = (v: string | undefined, what: string): Hex => {
    const a = need(v, what);
    if (!isAddress(a, { strict: false }) || /^0x0{40}$/i.test(a)) throw new CliError(`${what} must be a non-zero 0x address`);
    return getAddress(a);
  };
  const api = () => {
    const s = loadCliSettings(process.env);
    return new AdminClient(s.url, s.adminToken);
  };

  switch (sub) {
    case 'status':
    case 'pending': {
      const view = (await api().call('GET', `/admin/v1/chains/${chainId}/settlement`)) as StatusView;
      if (o.json) return void console.log(JSON.stringify(sub === 'pending' ? view.pending : view, null, 2));
      return sub === 'status' ? printStatus(view) : printPending(view);
    }
    case 'deploy': {
      const rpcUrl = need(o['rpc-url'], '--rpc-url');
      const executor = o.executor ? address(o.executor, '--executor') : await gatewayExecutor(api(), chainId);
      const owner = await ownerAccount(o['owner-key-file']);
      const { publicClient, wallet } = await clients(rpcUrl, chainId, owner);
      const hash = await wallet.deployContract({ ...TollgateSettlementArtifact, args: [owner.address, executor], chain: null });
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      if (receipt.status !== 'success' || !receipt.contractAddress) throw new CliError(`deployment ${hash} reverted`);
      const deployed = receipt.contractAddress.toLowerCase() as Hex;
      const check = await checkSettlementContract(publicClient, { chainId, address: deployed, expectedExecutor: executor });
      if (!check.ok) throw new CliError(`deployed, but the check fails: ${describeSettlementCheck(check)}`);
      const out = { chain_id: chainId, settlement_contract: deployed, owner: owner.address.toLowerCase(), executor: executor.toLowerCase(), tx_hash: hash, block: Number(receipt.blockNumber) };
      if (o.json) return void console.log(JSON.stringify(out, null, 2));
      print(out, false);
      console.log(`\nAdd to chain ${chainId} in your config file, then restart Tollgate:\n  "settlement_contract": "${deployed}"`);
      return;
    }
    case 'pause':
    case 'unpause':
      return ownerCall(o, chainId, { functionName: 'setPaused', args: [sub === 'pause'] });
    case 'rotate-executor':
      return ownerCall(o, chainId, { functionName: 'setExecutor', args: [address(arg, 'the new executor address')] });
    case 'transfer-ownership':
      return ownerCall(o, chainId, { functionName: 'transferOwnership', args: [address(arg, 'the new owner address')] });
    case 'accept-ownership':
      return ownerCall(o, chainId, { functionName: 'acceptOwnership', args: [] });
    default:
      throw new CliError(`unknown command settlement ${sub ?? ''}\n\n${SETTLEMENT_USAGE}`);
  }

  async function ownerCall(opts: typeof o, id: number, call: OwnerCall): Promise<void> {
    const rpcUrl = need(opts['rpc-url'], '--rpc-url');
    const contract = address(opts.contract, '--contract');
    const owner = await ownerAccount(opts['owner-key-file']);
    const { publicClient, wallet } = await clients(rpcUrl, id, owner);
    const abi = TollgateSettlementArtifact.abi;
    // Simulated first: a wrong key answers NotOwner(0x…) / NotPendingOwner(0x…) and sends nothing.
    let request;
    try {
      ({ request } = await publicClient.simulateContract({ address: contract, abi, functionName: call.functionName, args: call.args, account: owner } as Parameters<typeof publicClient.simulateContract>[0]));
    } catch (err) {
      const refused = refusalOf(err);
      throw new CliError(`the contract refuses ${call.functionName}: ${refused ? (refused.detail ?? refused.error) : ((err as { shortMessage?: string }).shortMessage ?? (err as Error).message)}`);
    }
    const hash = await wallet.writeContract({ ...request, chain: null } as Parameters<typeof wallet.writeContract>[0]);
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new CliError(`${call.functionName} ${hash} reverted`);
    const read = (fn: 'owner' | 'pendingOwner' | 'executor' | 'paused') => publicClient.readContract({ address: contract, abi, functionName: fn });
    const [owner_, pendingOwner, executor, paused] = await Promise.all([read('owner'), read('pendingOwner'), read('executor'), read('paused')]);
    const out = { chain_id: id, settlement_contract: contract.toLowerCase(), call: call.functionName, tx_hash: hash, owner: String(owner_).toLowerCase(), pending_owner: String(pendingOwner).toLowerCase(), executor: String(executor).toLowerCase(), paused };
    print(out, opts.json!);
    if (!opts.json && call.functionName === 'setExecutor') console.log("\nSet SETTLEMENT_KEY to the new executor's key and restart Tollgate: it refuses to start while they differ.");
    if (!opts.json && call.functionName === 'transferOwnership') console.log(`\nThe new owner finishes with: tollgate settlement accept-ownership --chain ${id} --rpc-url … --contract ${contract.toLowerCase()}`);
  }
}

async function clients(rpcUrl: string, chainId: number, account: PrivateKeyAccount) {
  const publicClient = createPublicClient({ transport: http(rpcUrl, { retryCount: 1 }) });
  let served: number;
  try {
    served = await publicClient.getChainId();
  } catch (err) {
    throw new CliError(`cannot read ${new URL(rpcUrl).host}: ${(err as { shortMessage?: string }).shortMessage ?? (err as Error).message}`);
  }
  if (served !== chainId) throw new CliError(`--rpc-url serves chain ${served}, not ${chainId}: nothing sent`);
  return { publicClient, wallet: createWalletClient({ account, transport: http(rpcUrl, { retryCount: 1 }) }) };
}

/** The executor address of the running gateway (its SETTLEMENT_KEY), for `deploy` without --executor. */
async function gatewayExecutor(api: AdminClient, chainId: number): Promise<Hex> {
  const chains = (await api.call('GET', '/admin/v1/chains')) as { chain_id: number; delegate: { executor_address: string | null } }[];
  const exec = chains.find((c) => c.chain_id === chainId)?.delegate.executor_address ?? chains.find((c) => c.delegate.executor_address)?.delegate.executor_address;
  if (!exec) throw new CliError('the gateway has no executor key (SETTLEMENT_KEY): set it, or pass --executor 0x…');
  return getAddress(exec);
}

/** The owner key: --owner-key-file, else OWNER_KEY, else a prompt (input hidden). Never printed. */
async function ownerAccount(file: string | undefined): Promise<PrivateKeyAccount> {
  let raw: string | undefined;
  if (file) {
    try {
      raw = readFileSync(file, 'utf8').split('\n')[0];
    } catch (err) {
      throw new CliError(`cannot read --owner-key-file: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  } else {
    raw = process.env.OWNER_KEY ?? (process.stdin.isTTY ? await promptHidden('owner private key (hex): ') : undefined);
  }
  if (!raw) throw new CliError('no owner key: pass --owner-key-file FILE or set OWNER_KEY');
  const key = (raw.trim().startsWith('0x') ? raw.trim() : `0x${raw.trim()}`) as Hex;
  if (!isHex(key) || key.length !== 66) throw new CliError('the owner key must be 32 bytes of hex');
  try {
    return privateKeyToAccount(key);
  } catch {
    throw new CliError('the owner key is not a valid secp256k1 private key');
  }
}

function promptHidden(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
    const out = rl as unknown as { _writeToOutput: (s: string) => void };
    let asked = false;
    out._writeToOutput = (s: string) => {
      if (!asked) process.stdout.write(s);
      asked = true;
    };
    rl.question(question, (answer) => {
      rl.close();
      process.stdout.write('\n');
      resolve(answer);
    });
  });
}

interface StatusView {
  chain_id: number;
  contract: null | { address: string; ok: boolean; problem: { code: string; message: string } | null; owner: string | null; pending_owner: string | null; executor: string | null; paused: boolean | null; warnings: string[] };
  executor: { address: string; native_balance_wei: string | null; nonce_latest: number | null; nonce_pending: number | null };
  balances: { symbol: string; token: string; amount_wei: string | null }[];
  pending: { order_id: string; kind: string; attempt: number; nonce: number; tx_hash: string; status: string; age_seconds: number; reason: string }[];
}

function printStatus(v: StatusView): void {
  const c = v.contract;
  if (!c) {
    console.log(`chain ${v.chain_id}: no settlement_contract configured (deploy one: tollgate settlement deploy)`);
  } else {
    console.log(`chain ${v.chain_id}: settlement_contract ${c.address}: ${c.problem ? `${c.problem.code}: ${c.problem.message}` : 'ok (shipped code, our executor)'}`);
    console.log(`  owner ${c.owner ?? '?'}${c.pending_owner ? `  (pending owner ${c.pending_owner})` : ''}`);
    console.log(`  executor ${c.executor ?? '?'}  paused ${c.paused ?? '?'}`);
    for (const w of c.warnings) console.log(`  warning: ${w}`);
  }
  for (const b of v.balances) console.log(`  pool ${b.symbol.padEnd(6)} ${b.amount_wei ?? '?'} (base units)`);
  console.log(`  executor gas balance ${v.executor.native_balance_wei ?? '?'} wei, nonce ${v.executor.nonce_latest ?? '?'} (pending ${v.executor.nonce_pending ?? '?'})`);
  console.log(`  waiting executor transactions: ${v.pending.length}${v.pending.length ? ' (tollgate settlement pending)' : ''}`);
}

function printPending(v: StatusView): void {
  if (v.pending.length === 0) return void console.log(`chain ${v.chain_id}: no executor transaction waiting`);
  for (const p of v.pending) console.log(`${p.kind} ${p.order_id} nonce ${p.nonce} ${p.status} ${p.age_seconds}s ${p.tx_hash}: ${p.reason}`);
}
