import { parseArgs } from 'node:util';
import { loadCliSettings } from '../config/cli.ts';
import { AdminClient, CliError } from './client.ts';
import { print } from './print.ts';

/** The card-rail commands of `tollgate` (thin clients of the admin API; docs/card-payments.md). */
export const CARD_COMMANDS = ['card'];

export const CARD_USAGE = `  card enable ID | card disable ID           turn the merchant's card rail on or off (checkout \`fiat\`, link \`card\`)
  card simulate ORDER_ID SCENARIO           TEST processor: succeeded|declined|processing|duplicate|refund|dispute_opened|dispute_won|dispute_lost
  card hold ORDER_ID --reason REASON         hold a card order (duplicate_payment|conflict|refund|dispute|balance)
  card release ORDER_ID --reason REASON      release a hold reason (no reason left: the order is invoiced)
  card refund ORDER_ID [--amount 1.00] [--reason TEXT]   refund through the processor (default: all that remains)`;

const enc = encodeURIComponent;

export async function runCardCommand(argv: string[]): Promise<void> {
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, reason: { type: 'string' }, amount: { type: 'string' } },
  });
  const [, sub, orderId, scenario] = pos;
  const need = (v: string | undefined, what: string): string => {
    if (!v) throw new CliError(`missing ${what}\n\n${CARD_USAGE}`);
    return v;
  };
  const settings = loadCliSettings(process.env);
  const api = new AdminClient(settings.url, settings.adminToken);
  const base = () => `/admin/v1/orders/${enc(need(orderId, 'order ID'))}/card`;
  let out: unknown;
  switch (sub) {
    case 'enable':
    case 'disable':
      // The positional after the subcommand is the merchant here, not an order.
      out = await api.call('POST', `/admin/v1/merchants/${enc(need(orderId, 'merchant ID'))}/card-rail`, { enabled: sub === 'enable' });
      break;
    case 'simulate':
      out = await api.call('POST', `${base()}/simulate`, { scenario: need(scenario, 'scenario') });
      break;
    case 'hold':
    case 'release':
      out = await api.call('POST', `${base()}/${sub}`, { reason: need(o.reason, '--reason') });
      break;
    case 'refund':
      out = await api.call('POST', `${base()}/refunds`, { ...(o.amount ? { amount: o.amount } : {}), ...(o.reason ? { reason: o.reason } : {}) });
      break;
    default:
      throw new CliError(`unknown card command ${sub ?? ''}\n\n${CARD_USAGE}`);
  }
  print(out, o.json!);
}
