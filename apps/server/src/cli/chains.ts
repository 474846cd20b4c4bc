import { parseArgs } from 'node:util';
import { loadCliSettings } from '../config/cli.ts';
import { AdminClient, CliError } from './client.ts';

/** `tollgate chains`: the configured chains and their DELEGATE set-up (a thin admin client). */
export const CHAINS_COMMANDS = ['chains'];

export const CHAINS_USAGE = `  chains                                    configured chains and Solana clusters, tokens, DELEGATE settlement, executor and delegate addresses`;

interface EvmChainView {
  kind: 'evm';
  chain_id: number;
  name: string;
  head_block: number | null;
  confirmations: number;
  finality_confirmations: number;
  tokens: { symbol: string; address: string; decimals: number; eip3009: boolean }[];
  delegate: { enabled: boolean; core_address: string | null; spent_address: string | null; executor_address: string | null };
}

interface SolanaChainView {
  kind: 'solana';
  chain_id: number;
  name: string;
  network: string;
  head_slot: number | null;
  confirm_commitment: string;
  tokens: { symbol: string; mint: string; decimals: number; program_id: string }[];
  delegate: { enabled: boolean; delegate_address: string | null };
}

type ChainView = EvmChainView | SolanaChainView;

export async function runChainsCommand(argv: string[]): Promise<void> {
  const { values: o, positionals: pos } = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  if (pos.length > 1) throw new CliError(`chains takes no argument\n\n${CHAINS_USAGE}`);
  const settings = loadCliSettings(process.env);
  const chains = (await new AdminClient(settings.url, settings.adminToken).call('GET', '/admin/v1/chains')) as ChainView[];
  if (o.json) return void console.log(JSON.stringify(chains, null, 2));
  if (chains.length === 0) return void console.log('no chains configured');
  for (const c of chains) {
    if (c.kind === 'solana') {
      console.log(`${c.chain_id} ${c.name} (${c.network}): head slot ${c.head_slot ?? 'not scanned yet'}, confirmed at ${c.confirm_commitment}, final at finalized`);
      for (const t of c.tokens) console.log(`  ${t.symbol} ${t.mint} decimals ${t.decimals}, program ${t.program_id}`);
      console.log(`  delegate: ${c.delegate.enabled ? `enabled, ${c.delegate.delegate_address}` : 'disabled (no Solana delegate key)'}`);
      continue;
    }
    console.log(`${c.chain_id} ${c.name}: head ${c.head_block ?? 'not scanned yet'}, confirmations ${c.confirmations}, finality ${c.finality_confirmations}`);
    for (const t of c.tokens) console.log(`  ${t.symbol} ${t.address} decimals ${t.decimals}${t.eip3009 ? ', EIP-3009' : ''}`);
    const d = c.delegate;
    console.log(`  delegate: ${d.enabled ? 'enabled' : 'disabled'}, settlement ${d.spent_address ?? 'none'}, executor ${d.executor_address ?? 'none (no settlement signer)'}`);
  }
}
