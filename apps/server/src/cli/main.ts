import { parseArgs } from 'node:util';
import { loadCliSettings } from '../config/cli.ts';
import { AdminClient, CliError } from './client.ts';
import { print } from './print.ts';
import { ROLES, type Role } from '../roles.ts';
import { CARD_COMMANDS, CARD_USAGE, runCardCommand } from './card.ts';
import { CHAINS_COMMANDS, CHAINS_USAGE, runChainsCommand } from './chains.ts';
import { DELEGATE_USAGE, isDelegateCommand, runDelegateCommand } from './delegate.ts';
import { KEYS_COMMANDS, KEYS_USAGE, runKeysCommand } from './keys.ts';
import { LINK_COMMANDS, LINK_USAGE, runLinkCommand } from './links.ts';
import { MPP_COMMANDS, MPP_USAGE, runMppCommand } from './mpp.ts';
import { OPS_COMMANDS, OPS_USAGE, runOpsCommand } from './ops.ts';
import { PORTAL_COMMANDS, PORTAL_USAGE, runPortalCommand } from './portal.ts';
import { RECONCILE_COMMANDS, RECONCILE_USAGE, runReconcileCommand } from './reconcile.ts';
import { WEBHOOK_COMMANDS, WEBHOOK_USAGE, runWebhookCommand } from './webhooks.ts';
import { SETTLEMENT_USAGE } from './settlement-usage.ts';

const USAGE = `usage: tollgate <command> [options]

  serve [--role api|worker|all]             run the gateway (dev profile without TOLLGATE_CONFIG)
  merchant create --name NAME [--id ID] [--receive-type DIRECT|DELEGATE] [--logo-url URL] [--return-url URL …]
  merchant show ID
  merchant add-wallet ID --chain CHAIN_ID --token SYMBOL --address 0x…
  merchant top-up ID --amount 10.00
  merchant create-key ID
  merchant revoke-key ID API_KEY
  merchant return-urls ID [--add URL …] [--remove URL …]   list (no option) or change the return-URL allowlist
  merchant set-tolerance ID --bps N         under-payment tolerance, basis points of the amount (0–1000)
${WEBHOOK_USAGE}
${MPP_USAGE}
${LINK_USAGE}
${CHAINS_USAGE}
${CARD_USAGE}
${DELEGATE_USAGE}
${SETTLEMENT_USAGE}
${PORTAL_USAGE}
${RECONCILE_USAGE}
${OPS_USAGE}
${KEYS_USAGE}

Admin commands talk to a running Tollgate: TOLLGATE_URL (default http://127.0.0.1:8402) and
ADMIN_TOKEN (default: the dev profile's .tollgate/admin.token). Add --json for machine output.
migrate, backup, restore and rotate-master-key work on the database itself with the gateway's
configuration (TOLLGATE_CONFIG, DATABASE_URL or DATA_DIR, MASTER_KEY).`;

const enc = encodeURIComponent;

async function main(argv: string[]): Promise<void> {
  if (WEBHOOK_COMMANDS.includes(argv[0] ?? '')) return runWebhookCommand(argv);
  if (MPP_COMMANDS.includes(argv[0] ?? '')) return runMppCommand(argv);
  if (CHAINS_COMMANDS.includes(argv[0] ?? '')) return runChainsCommand(argv);
  if (KEYS_COMMANDS.includes(argv[0] ?? '')) return runKeysCommand(argv);
  if (CARD_COMMANDS.includes(argv[0] ?? '')) return runCardCommand(argv);
  if (isDelegateCommand(argv)) return runDelegateCommand(argv);
  // Loaded only here: it signs transactions itself (viem accounts), which admin commands never need.
  if (argv[0] === 'settlement') return (await import('./settlement.ts')).runSettlementCommand(argv);
  if (LINK_COMMANDS.includes(argv[0] ?? '')) return runLinkCommand(argv);
  if (PORTAL_COMMANDS.includes(argv[0] ?? '')) return runPortalCommand(argv);
  if (RECONCILE_COMMANDS.includes(argv[0] ?? '')) return runReconcileCommand(argv.slice(1));
  if (OPS_COMMANDS.includes(argv[0] ?? '')) return runOpsCommand(argv);
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      role: { type: 'string', default: 'all' },
      name: { type: 'string' },
      id: { type: 'string' },
      'receive-type': { type: 'string' },
      'logo-url': { type: 'string' },
      'return-url': { type: 'string', multiple: true },
      add: { type: 'string', multiple: true },
      remove: { type: 'string', multiple: true },
      chain: { type: 'string' },
      token: { type: 'string' },
      address: { type: 'string' },
      amount: { type: 'string' },
      bps: { type: 'string' },
    },
  });
  const [cmd, sub, ...rest] = pos;
  if (o.help || !cmd || cmd === 'help') return void console.log(USAGE);
  if (cmd === 'serve') {
    if (!(ROLES as readonly string[]).includes(o.role!)) throw new CliError(`--role must be ${ROLES.join(', ')}`);
    // Loaded only here: the gateway (fastify, viem, PGlite) would add seconds to every admin command.
    const { serve } = await import('./serve.ts');
    return serve(o.role as Role);
  }
  if (cmd !== 'merchant') throw new CliError(`unknown command ${cmd}\n\n${USAGE}`);

  const settings = loadCliSettings(process.env);
  const api = new AdminClient(settings.url, settings.adminToken);
  const need = (v: string | undefined, what: string): string => {
    if (!v) throw new CliError(`missing ${what}\n\n${USAGE}`);
    return v;
  };
  const id = () => enc(need(rest[0], 'merchant ID'));
  let out: unknown;
  switch (sub) {
    case 'create':
      out = await api.call('POST', '/admin/v1/merchants', {
        name: need(o.name, '--name'),
        ...(o.id ? { merchant_id: o.id } : {}),
        ...(o['receive-type'] ? { receive_type: o['receive-type'] } : {}),
        ...(o['logo-url'] ? { logo_url: o['logo-url'] } : {}),
        ...(o['return-url'] ? { return_urls: o['return-url'] } : {}),
      });
      break;
    case 'show':
      out = await api.call('GET', `/admin/v1/merchants/${id()}`);
      break;
    case 'add-wallet': {
      const chain = Number(need(o.chain, '--chain'));
      if (!Number.isInteger(chain)) throw new CliError('--chain must be an integer chain id');
      out = await api.call('POST', `/admin/v1/merchants/${id()}/wallets`, { chain_id: chain, token_symbol: need(o.token, '--token'), address: need(o.address, '--address') });
      break;
    }
    case 'top-up':
      out = await api.call('POST', `/admin/v1/merchants/${id()}/fee-balance/top-ups`, { amount: need(o.amount, '--amount') });
      break;
    case 'create-key':
      out = await api.call('POST', `/admin/v1/merchants/${id()}/api-keys`);
      break;
    case 'revoke-key':
      out = await api.call('DELETE', `/admin/v1/merchants/${id()}/api-keys/${enc(need(rest[1], 'API key'))}`);
      break;
    case 'return-urls':
      out = await returnUrls(api, id(), o.add ?? [], o.remove ?? []);
      break;
    case 'set-tolerance': {
      const bps = Number(need(o.bps, '--bps'));
      if (!Number.isInteger(bps) || bps < 0 || bps > 1000) throw new CliError('--bps must be an integer from 0 to 1000 (50 = 0.5 %)');
      out = await api.call('PUT', `/admin/v1/merchants/${id()}/underpayment-tolerance`, { underpay_tolerance_bps: bps });
      break;
    }
    default:
      throw new CliError(`unknown merchant command ${sub ?? ''}\n\n${USAGE}`);
  }
  print(out, o.json!);
  if (!o.json && (sub === 'create' || sub === 'create-key')) console.log('\nThe API secret is shown only once: store it now.');
}

/**
 * `merchant return-urls`: the admin API replaces the whole allowlist (PUT), so --add/--remove read
 * it first and send the result; without options it only lists. Removing an entry that is not on
 * the list is refused, so a typo does not look like success.
 */
async function returnUrls(api: AdminClient, merchantId: string, add: string[], remove: string[]): Promise<unknown> {
  const current = ((await api.call('GET', `/admin/v1/merchants/${merchantId}`)) as { return_urls: string[] }).return_urls;
  if (add.length === 0 && remove.length === 0) return { merchant_id: decodeURIComponent(merchantId), return_urls: current };
  const missing = remove.filter((u) => !current.includes(u));
  if (missing.length > 0) throw new CliError(`not on the return-URL list: ${missing.join(', ')}`);
  const next = current.filter((u) => !remove.includes(u));
  for (const u of add) if (!next.includes(u)) next.push(u);
  return api.call('PUT', `/admin/v1/merchants/${merchantId}/return-urls`, { return_urls: next });
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof CliError) {
    console.error(`tollgate: ${err.message}`);
    process.exit(1);
  }
  if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`tollgate: ${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
});
