import { parseArgs } from 'node:util';
import { loadCliSettings } from '../config/cli.ts';
import { AdminClient, CliError } from './client.ts';
import { print } from './print.ts';

/** The machine-payment commands of `tollgate` (thin clients of the admin API). */
export const MPP_COMMANDS = ['mpp'];

export const MPP_USAGE = `  mpp set-price ID ROUTE --chain CHAIN_ID --token SYMBOL --amount AMOUNT_WEI   (ROUTE e.g. GET:api:data)
  mpp routes ID
  mpp rotate-receipt-key                                  (new signing key; old keys stay in the JWKS)`;

const enc = encodeURIComponent;

export async function runMppCommand(argv: string[]): Promise<void> {
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      chain: { type: 'string' },
      token: { type: 'string' },
      amount: { type: 'string' },
    },
  });
  const [, sub, ...rest] = pos;
  const settings = loadCliSettings(process.env);
  const api = new AdminClient(settings.url, settings.adminToken);
  const need = (v: string | undefined, what: string): string => {
    if (!v) throw new CliError(`missing ${what}\n\n${MPP_USAGE}`);
    return v;
  };
  let out: unknown;
  switch (sub) {
    case 'set-price': {
      const chain = Number(need(o.chain, '--chain'));
      if (!Number.isInteger(chain)) throw new CliError('--chain must be an integer chain id');
      const path = `/admin/v1/merchants/${enc(need(rest[0], 'merchant ID'))}/mpp/routes/${enc(need(rest[1], 'route (e.g. GET:api:data)'))}`;
      out = await api.call('PUT', path, { chain_id: chain, token_symbol: need(o.token, '--token'), amount_wei: need(o.amount, '--amount') });
      break;
    }
    case 'routes':
      out = await api.call('GET', `/admin/v1/merchants/${enc(need(rest[0], 'merchant ID'))}/mpp/routes`);
      break;
    case 'rotate-receipt-key':
      out = await api.call('POST', '/admin/v1/mpp/receipt-keys');
      break;
    default:
      throw new CliError(`unknown mpp command ${sub ?? ''}\n\n${MPP_USAGE}`);
  }
  print(out, o.json!);
}
