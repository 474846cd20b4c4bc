import { parseArgs } from 'node:util';
import { loadCliSettings } from '../config/cli.ts';
import { AdminClient, CliError } from './client.ts';
import { print } from './print.ts';

/** The hosted quick-pay commands of `tollgate` (thin clients of the admin API). */
export const LINK_COMMANDS = ['link'];

export const LINK_USAGE = `  link create ID --name NAME --price 9.99 [--description TEXT] [--max-payments N] [--inventory N]
                                            a product and a payment link selling it (prints the link URL)
  link create ID --min 1 --max 100          an any-amount link
  link list ID
  link sessions ID LINK_ID                  the link's sessions with their orders (amount, memo, status)
  link deactivate ID LINK_ID`;

const enc = encodeURIComponent;

function int(v: string | undefined, what: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[0-9]+$/.test(v)) throw new CliError(`${what} must be a non-negative integer`);
  return Number(v);
}

interface LinkItem {
  link_id: string;
  url: string;
  product_id?: string;
  min_amount?: string;
  max_amount?: string;
  payment_rails: string[];
  active: boolean;
  max_payments?: number;
}
interface ProductItem {
  product_id: string;
  name: string;
  price?: string;
  fiat_currency?: string;
  fiat_amount?: string;
  inventory?: number;
}

/**
 * `link list` for a person: one line per link with what it sells and for how much (the API's
 * list names only the product id), then its URL.
 */
function linkTable(links: readonly LinkItem[], products: ReadonlyMap<string, ProductItem>): string {
  if (links.length === 0) return 'no payment links';
  const rows = links.map((l) => {
    const p = l.product_id !== undefined ? products.get(l.product_id) : undefined;
    const what = p ? p.name : (l.product_id ?? 'any amount');
    const prices = p ? [p.price, p.fiat_amount !== undefined ? `${p.fiat_amount} ${p.fiat_currency}` : undefined].filter(Boolean).join(' / ') : `${l.min_amount}–${l.max_amount}`;
    const limits = [l.max_payments !== undefined ? `max ${l.max_payments} payments` : '', p?.inventory !== undefined ? `inventory ${p.inventory}` : ''].filter(Boolean).join(', ');
    return [l.link_id, what, prices, l.payment_rails.join(','), l.active ? 'active' : 'inactive', limits, l.url];
  });
  const head = ['LINK', 'SELLS', 'PRICE', 'RAILS', 'STATE', 'LIMITS', 'URL'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

export async function runLinkCommand(argv: string[]): Promise<void> {
  const { values: o, positionals: pos } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      name: { type: 'string' },
      description: { type: 'string' },
      price: { type: 'string' },
      min: { type: 'string' },
      max: { type: 'string' },
      'max-payments': { type: 'string' },
      inventory: { type: 'string' },
    },
  });
  const [, sub, ...rest] = pos;
  const settings = loadCliSettings(process.env);
  const api = new AdminClient(settings.url, settings.adminToken);
  const need = (v: string | undefined, what: string): string => {
    if (!v) throw new CliError(`missing ${what}\n\n${LINK_USAGE}`);
    return v;
  };
  let out: unknown;
  switch (sub) {
    case 'create': {
      const id = enc(need(rest[0], 'merchant ID'));
      const maxPayments = int(o['max-payments'], '--max-payments');
      const limits = maxPayments !== undefined ? { max_payments: maxPayments } : {};
      if (o.price !== undefined) {
        const inventory = int(o.inventory, '--inventory');
        const product = (await api.call('POST', `/admin/v1/merchants/${id}/products`, {
          name: need(o.name, '--name'),
          price: o.price,
          ...(o.description !== undefined ? { description: o.description } : {}),
          ...(inventory !== undefined ? { inventory } : {}),
        })) as { product_id: string };
        out = await api.call('POST', `/admin/v1/merchants/${id}/payment-links`, { product_id: product.product_id, ...limits });
      } else {
        out = await api.call('POST', `/admin/v1/merchants/${id}/payment-links`, { min_amount: need(o.min, '--price or --min'), max_amount: need(o.max, '--max'), ...limits });
      }
      break;
    }
    case 'list': {
      const id = enc(need(rest[0], 'merchant ID'));
      const links = (await api.call('GET', `/admin/v1/merchants/${id}/payment-links?limit=100`)) as { data: LinkItem[] };
      if (o.json) return print(links, true);
      const products = (await api.call('GET', `/admin/v1/merchants/${id}/products?limit=100`)) as { data: ProductItem[] };
      return void console.log(linkTable(links.data, new Map(products.data.map((p) => [p.product_id, p]))));
    }
    case 'sessions':
      out = await api.call('GET', `/admin/v1/merchants/${enc(need(rest[0], 'merchant ID'))}/payment-links/${enc(need(rest[1], 'LINK_ID'))}/sessions`);
      break;
    case 'deactivate':
      out = await api.call('POST', `/admin/v1/merchants/${enc(need(rest[0], 'merchant ID'))}/payment-links/${enc(need(rest[1], 'LINK_ID'))}/deactivate`);
      break;
    default:
      throw new CliError(`unknown link command ${sub ?? ''}\n\n${LINK_USAGE}`);
  }
  print(out, o.json!);
}
