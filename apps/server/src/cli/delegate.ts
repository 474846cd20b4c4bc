import { parseArgs } from 'node:util';
import { loadCliSettings } from '../config/cli.ts';
import { AdminClient, CliError } from './client.ts';
import { print } from './print.ts';

/**
 * DELEGATE commands of `tollgate` (thin clients of the admin API): callback registrations and
 * refunds of failed DELEGATE orders.
 */
export const DELEGATE_USAGE = `  merchant callback ID --chain CHAIN_ID --contract 0x… --eip712-name NAME --eip712-version VERSION
                                            register (or replace) the merchant's DELEGATE callback adapter on a chain
  merchant callbacks ID                     the merchant's callback registrations
  order refund ORDER_ID                     refund a FAILED DELEGATE order's payment to its payer`;

/** Whether argv is a DELEGATE command (`merchant callback|callbacks …`, `order refund …`). */
export function isDelegateCommand(argv: string[]): boolean {
  return (argv[0] === 'merchant' && (argv[1] === 'callback' || argv[1] === 'callbacks')) || argv[0] === 'order';
}

const enc = encodeURIComponent;

export async function runDelegateCommand(argv: string[]): Promise<void> {
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      chain: { type: 'string' },
      contract: { type: 'string' },
      'eip712-name': { type: 'string' },
      'eip712-version': { type: 'string' },
    },
  });
  const [cmd, sub, arg] = pos;
  const need = (v: string | undefined, what: string): string => {
    if (!v) throw new CliError(`missing ${what}\n\n${DELEGATE_USAGE}`);
    return v;
  };
  const settings = loadCliSettings(process.env);
  const api = new AdminClient(settings.url, settings.adminToken);
  let out: unknown;
  if (cmd === 'merchant' && sub === 'callback') {
    const chain = Number(need(o.chain, '--chain'));
    if (!Number.isInteger(chain)) throw new CliError('--chain must be an integer chain id');
    out = await api.call('POST', `/admin/v1/merchants/${enc(need(arg, 'merchant ID'))}/callbacks`, {
      chain_id: chain,
      callback_contract: need(o.contract, '--contract'),
      eip712_name: need(o['eip712-name'], '--eip712-name'),
      eip712_version: need(o['eip712-version'], '--eip712-version'),
    });
  } else if (cmd === 'merchant' && sub === 'callbacks') {
    out = await api.call('GET', `/admin/v1/merchants/${enc(need(arg, 'merchant ID'))}/callbacks`);
  } else if (cmd === 'order' && sub === 'refund') {
    out = await api.call('POST', `/admin/v1/orders/${enc(need(arg, 'order ID'))}/refund`, {});
  } else {
    throw new CliError(`unknown command ${pos.join(' ')}\n\n${DELEGATE_USAGE}`);
  }
  print(out, o.json!);
}
