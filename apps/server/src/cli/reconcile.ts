import { parseArgs } from 'node:util';
import { loadCliSettings } from '../config/cli.ts';
import { AdminClient, CliError } from './client.ts';

/** `tollgate reconcile`: every incoming transfer on a chain and what claimed it (a thin admin client). */
export const RECONCILE_COMMANDS = ['reconcile'];

export const RECONCILE_USAGE = `  reconcile --chain ID [--merchant ID] [--since TIME] [--until TIME] [--unclaimed] [--json]
                                            incoming transfers and what claimed each (docs/attribution.md)`;

interface Transfer {
  tx_hash: string;
  log_index: number;
  block_number: number;
  block_time: string | null;
  from_address: string;
  to_address: string;
  amount_wei: string;
  merchant_id: string | null;
  claimed_by: { purpose: string; id: string } | null;
}

interface Page {
  data: Transfer[];
  next_after: string | null;
}

export async function runReconcileCommand(argv: string[]): Promise<void> {
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      chain: { type: 'string' },
      merchant: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      unclaimed: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  if (pos.length > 1) throw new CliError(`reconcile takes options only\n\n${RECONCILE_USAGE}`);
  if (!o.chain || !/^[0-9]+$/.test(o.chain)) throw new CliError(`--chain must be a chain id\n\n${RECONCILE_USAGE}`);
  const settings = loadCliSettings(process.env);
  const api = new AdminClient(settings.url, settings.adminToken);
  const all: Transfer[] = [];
  // Every page: an auditor's list is complete or it is nothing.
  for (let after: string | null = null, first = true; first || after !== null; first = false) {
    const q = new URLSearchParams({ chain_id: o.chain, limit: '1000' });
    if (o.merchant) q.set('merchant_id', o.merchant);
    if (o.since) q.set('since', o.since);
    if (o.until) q.set('until', o.until);
    if (o.unclaimed) q.set('unclaimed', 'true');
    if (after) q.set('after', after);
    const page = (await api.call('GET', `/admin/v1/reconciliation?${q}`)) as Page;
    all.push(...page.data);
    after = page.next_after;
  }
  if (o.json) return void console.log(JSON.stringify(all, null, 2));
  if (all.length === 0) return void console.log('no incoming transfers in this range');
  for (const t of all) {
    const by = t.claimed_by ? `${t.claimed_by.purpose} ${t.claimed_by.id}` : 'UNCLAIMED';
    console.log(`${t.block_number}:${t.log_index} ${t.tx_hash} ${t.amount_wei} from ${t.from_address} to ${t.to_address} (${t.merchant_id ?? 'no merchant'}) -> ${by}`);
  }
  const unclaimed = all.filter((t) => t.claimed_by === null).length;
  console.log(`\n${all.length} transfers, ${all.length - unclaimed} claimed, ${unclaimed} unclaimed`);
}
