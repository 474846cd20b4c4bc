// Overview (SVG chart), orders list (search, filters, keyset pages), order detail.
import { api, can, qs, type Session } from './api.ts';
import { h, replace } from '@tollgate/checkout-ui/dom';
import { ORDER_STATUSES as STATUSES, type OrderStatus } from '@tollgate/protocol/states';
import { field, fmtTime, message, page, select, short, table } from './ui.ts';

const COLORS: Record<OrderStatus, string> = { INVOICED: '#15803d', PAYMENT_CONFIRMED: '#2563eb', CHECKOUT_VERIFIED: '#a16207', EXPIRED: '#6b7280', CANCELLED: '#9ca3af', FAILED: '#b91c1c' };
const SVG = 'http://www.w3.org/2000/svg';

function svg(tag: string, attrs: Record<string, string | number>, ...kids: Node[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const k of kids) el.appendChild(k);
  return el;
}

interface Bucket { day: string; status: string; token_symbol: string; orders: number; amount: string }

/** Stacked bars of orders per day by status; the numbers are also in the table below it. */
function chart(buckets: Bucket[], days: number): SVGElement {
  const dayList: string[] = [];
  const end = new Date();
  for (let i = days - 1; i >= 0; i--) dayList.push(new Date(end.getTime() - i * 86_400_000).toISOString().slice(0, 10));
  const per = new Map<string, Map<string, number>>();
  for (const b of buckets) {
    const m = per.get(b.day) ?? new Map<string, number>();
    m.set(b.status, (m.get(b.status) ?? 0) + b.orders);
    per.set(b.day, m);
  }
  const max = Math.max(1, ...[...per.values()].map((m) => [...m.values()].reduce((a, x) => a + x, 0)));
  const W = 600, H = 160, bw = W / dayList.length;
  const bars: Node[] = [];
  dayList.forEach((d, i) => {
    let y = H;
    for (const s of STATUSES) {
      const n = per.get(d)?.get(s) ?? 0;
      if (!n) continue;
      const hgt = (n / max) * (H - 10);
      y -= hgt;
      bars.push(svg('rect', { x: i * bw + 1, y, width: Math.max(bw - 2, 1), height: hgt, fill: COLORS[s] ?? '#000' }, svg('title', {}, document.createTextNode(`${d} ${s}: ${n}`))));
    }
  });
  const total = buckets.reduce((a, b) => a + b.orders, 0);
  return svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Orders per day over ${days} days, ${total} in total, stacked by status`, class: 'chart' }, ...bars);
}

export async function overviewPage(): Promise<HTMLElement> {
  const o = await api<{ days: number; buckets: Bucket[] }>('GET', 'overview?days=30');
  const byStatus = new Map<string, number>();
  const volume = new Map<string, string[]>();
  for (const b of o.buckets) {
    byStatus.set(b.status, (byStatus.get(b.status) ?? 0) + b.orders);
    if (b.status === 'INVOICED') volume.set(b.token_symbol, [...(volume.get(b.token_symbol) ?? []), b.amount]);
  }
  const legend = h('ul', { class: 'legend' }, STATUSES.map((s) => h('li', {}, h('span', { class: `swatch s-${s}`, 'aria-hidden': 'true' }), `${s}: ${byStatus.get(s) ?? 0}`)));
  const totals = [...volume.entries()].map(([tok, v]) => [tok, sumDecimals(v)]);
  return page(
    'Overview',
    h('p', {}, 'Orders of the last 30 days (UTC), by status.'),
    chart(o.buckets, o.days),
    legend,
    table('Invoiced volume by token', ['Token', 'Invoiced volume'], totals.length ? totals : [['—', '0']]),
  );
}

/** Sums decimal strings exactly (bigint at the largest scale). */
function sumDecimals(xs: string[]): string {
  const scale = Math.max(0, ...xs.map((x) => (x.split('.')[1] ?? '').length));
  const total = xs.reduce((a, x) => {
    const [i, f = ''] = x.split('.');
    return a + BigInt(i! + f.padEnd(scale, '0'));
  }, 0n);
  const s = total.toString().padStart(scale + 1, '0');
  return scale ? `${s.slice(0, -scale)}.${s.slice(-scale)}`.replace(/\.?0+$/, '') : s;
}

interface OrderRow { order_id: string; dapp_order_id: string; flow: string; chain_id: number; token_symbol: string; from_address: string; amount: string; status: string; tx_hash?: string; created_at: string }

export async function ordersPage(params: URLSearchParams): Promise<HTMLElement> {
  const q = h('input', { type: 'search', name: 'q', value: params.get('q') ?? '', placeholder: 'order id, dapp_order_id, payer or tx hash', autocomplete: 'off' });
  const status = select('status', [['', 'any status'], ...STATUSES.map((s): [string, string] => [s, s])], params.get('status') ?? '');
  const flow = h('input', { name: 'flow', value: params.get('flow') ?? '', placeholder: 'DIRECT' });
  const chain = h('input', { name: 'chain_id', value: params.get('chain_id') ?? '', inputmode: 'numeric' });
  const token = h('input', { name: 'token', value: params.get('token') ?? '', placeholder: 'USDC' });
  const from = h('input', { type: 'date', name: 'from', value: params.get('from') ?? '' });
  const to = h('input', { type: 'date', name: 'to', value: params.get('to') ?? '' });
  const form = h(
    'form',
    { class: 'filters', role: 'search', onsubmit: (e: Event) => {
      e.preventDefault();
      const p = new URLSearchParams();
      for (const el of [q, status, flow, chain, token, from, to]) if (el.value.trim()) p.set(el.name, el.value.trim());
      location.hash = `#/orders?${p}`;
    } },
    field('Search', q), field('Status', status),
    // The rarer filters fold away (a 375-px screen shows the list without scrolling past them).
    h('details', { class: 'more', ...(['flow', 'chain_id', 'token', 'from', 'to'].some((k) => params.get(k)) ? { open: true } : {}) },
      h('summary', {}, 'More filters'),
      h('div', { class: 'inline' }, field('Flow', flow), field('Chain id', chain), field('Token', token), field('Created from', from), field('Created before', to))),
    h('button', { type: 'submit', class: 'primary' }, 'Search'),
  );
  const filters: Record<string, string | undefined> = {};
  for (const k of ['q', 'status', 'flow', 'chain_id', 'token', 'from', 'to', 'cursor']) filters[k] = params.get(k) ?? undefined;
  const res = await api<{ orders: OrderRow[]; next: string | null }>('GET', `orders${qs(filters)}`);
  const rows = res.orders.map((o) => [
    h('a', { href: `#/orders/${encodeURIComponent(o.order_id)}` }, o.order_id), o.dapp_order_id, o.status, `${o.amount} ${o.token_symbol}`, String(o.chain_id), short(o.from_address, 6), o.tx_hash ? short(o.tx_hash, 8) : '—', fmtTime(o.created_at),
  ]);
  const nextParams = new URLSearchParams(params);
  if (res.next) nextParams.set('cursor', res.next);
  return page(
    'Orders',
    form,
    h('p', { class: 'export' }, 'Export for accounting: ', h('a', { href: '#/exports' }, 'CSV of orders and payments')),
    rows.length ? table('Orders', ['Order', 'dapp_order_id', 'Status', 'Amount', 'Chain', 'Payer', 'Tx', 'Created'], rows) : h('p', { role: 'status' }, 'No orders match.'),
    h('nav', { 'aria-label': 'Pages', class: 'pager' }, params.get('cursor') ? h('a', { href: '#/orders' }, 'First page') : null, res.next ? h('a', { href: `#/orders?${nextParams}`, rel: 'next' }, 'Next page') : null),
  );
}

export async function orderPage(id: string, session: Session): Promise<HTMLElement> {
  const d = await api<any>('GET', `orders/${encodeURIComponent(id)}`);
  const o = d.order;
  const out = h('div', {});
  const deliveries = h('div', {});
  const renderDeliveries = (list: any[]) =>
    replace(deliveries, list.length
      ? table('Webhook deliveries of this order', ['Delivery', 'Event', 'Status', 'Attempts', 'Last', ''], list.map((x) => [x.delivery_id, x.event, x.status, String(x.attempt_count), x.last_status_code ? String(x.last_status_code) : x.last_error ?? '—',
          can(session, 'developer') ? h('button', { type: 'button', 'data-redeliver': x.delivery_id, onclick: async () => {
            try {
              const r = await api('POST', `webhook-deliveries/${encodeURIComponent(x.delivery_id)}/redeliver`);
              out.replaceChildren(message(`Delivery ${r.result}: ${r.delivery.delivery_id}`));
            } catch (e) { out.replaceChildren(message((e as Error).message, 'error')); }
          } }, 'Redeliver') : '']))
      : h('p', {}, 'No webhook deliveries for this order.'));
  renderDeliveries(d.deliveries);
  const facts: [string, string | Node][] = [
    ['Status', o.status], ['dapp_order_id', o.dapp_order_id], ['Amount', `${d.amount} ${o.token_symbol} (${o.amount_wei} in the smallest unit, ${d.decimals} decimals)`], ['Fee', d.fee],
    ['Flow', o.flow], ['Chain', String(o.chain_id)], ['Payer', o.from_address], ['Pay to', o.pay_to_address], ['Created', fmtTime(o.created_at)],
    ['Transaction', o.tx_hash ? (d.explorer_url ? h('a', { href: d.explorer_url, rel: 'noopener noreferrer', target: '_blank' }, o.tx_hash) : o.tx_hash) : '—'],
  ];
  return page(
    `Order ${o.order_id}`,
    h('dl', { class: 'facts' }, facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h('h2', {}, 'Timeline'),
    h('ol', { class: 'timeline' }, d.timeline.map((t: any) => h('li', {}, `${fmtTime(t.at)}: ${t.from_status ?? 'created'} → ${t.to_status} (${t.trigger})`))),
    h('h2', {}, 'Transfers seen'),
    o.observed_transfers?.length
      ? table('Transfers', ['Tx', 'Kind', 'Amount (smallest unit)', 'Confirmations', 'Orphaned'], o.observed_transfers.map((t: any) => [short(t.tx_hash, 8), t.kind, t.amount_wei, String(t.confirmations), t.orphaned ? 'yes' : 'no']))
      : h('p', {}, 'No transfer recorded yet.'),
    h('h2', {}, 'Proof'),
    d.proof ? h('pre', { class: 'proof', tabindex: '0' }, JSON.stringify(d.proof, null, 2)) : h('p', {}, 'No confirmed payment yet.'),
    h('h2', {}, 'Webhook deliveries'),
    out,
    deliveries,
  );
}

export async function checkoutPage(params: URLSearchParams): Promise<HTMLElement> {
  const before = params.get('before') ?? undefined;
  const r = await api<any>('GET', `checkout-sessions${qs({ before })}`);
  return page(
    'Checkout sessions',
    h('p', {}, 'Hosted checkout sessions your server created, newest first.'),
    r.sessions.length
      ? table('Checkout sessions', ['Session', 'Status', 'Price', 'Reference', 'Order', 'Return URL', 'Created'], r.sessions.map((s: any) => [
          short(s.checkout_id, 8), s.status, s.price ?? s.fiat ?? '—', s.client_reference_id ?? '—',
          s.order_id ? h('a', { href: `#/orders/${encodeURIComponent(s.order_id)}` }, s.order_id) : '—', s.success_url ?? '—', fmtTime(s.created_at),
        ]))
      : h('p', { role: 'status' }, 'No checkout sessions yet.'),
    h('nav', { 'aria-label': 'Pages', class: 'pager' }, before ? h('a', { href: '#/checkout' }, 'First page') : null, r.next ? h('a', { href: `#/checkout?before=${encodeURIComponent(r.next)}`, rel: 'next' }, 'Next page') : null),
  );
}
