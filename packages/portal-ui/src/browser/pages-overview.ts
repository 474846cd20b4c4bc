// Overview: orders per day by status, and paid volume per day in each currency or token, over the
// last 30 UTC days; charts with axes and dates, the same numbers in the legend and table.
import { api } from './api.ts';
import { h } from '@tollgate/checkout-ui/dom';
import { barChart, fromUnits, lastDays, toUnits, type Part } from './chart.ts';
import { page, STATUS_LABELS, table } from './ui.ts';

const STATUSES = ['INVOICED', 'PAYMENT_CONFIRMED', 'CHECKOUT_VERIFIED', 'FAILED', 'EXPIRED', 'CANCELLED'];
const COLORS: Record<string, string> = { INVOICED: '#15803d', PAYMENT_CONFIRMED: '#2563eb', CHECKOUT_VERIFIED: '#a16207', EXPIRED: '#6b7280', CANCELLED: '#9ca3af', FAILED: '#b91c1c' };

interface Bucket {
  day: string;
  status: string;
  token_symbol: string;
  rail: 'crypto' | 'card';
  orders: number;
  amount: string;
}

export async function overviewPage(): Promise<HTMLElement> {
  const o = await api<{ days: number; buckets: Bucket[] }>('GET', 'overview?days=30');
  const days = lastDays(o.days);
  const counts = new Map<string, Part[]>();
  const byStatus = new Map<string, number>();
  // Paid volume (INVOICED) per currency: each at the largest scale its amounts use, so sums are exact.
  const paid = new Map<string, Bucket[]>();
  for (const b of o.buckets) {
    byStatus.set(b.status, (byStatus.get(b.status) ?? 0) + b.orders);
    if (b.status === 'INVOICED') paid.set(b.token_symbol, [...(paid.get(b.token_symbol) ?? []), b]);
  }
  for (const d of days) {
    counts.set(
      d,
      STATUSES.map((s) => ({ value: BigInt(o.buckets.filter((b) => b.day === d && b.status === s).reduce((a, b) => a + b.orders, 0)), color: COLORS[s]!, label: STATUS_LABELS[s]! })),
    );
  }
  const total = o.buckets.reduce((a, b) => a + b.orders, 0);
  const volume: Node[] = [];
  const totals: string[][] = [];
  for (const [cur, list] of paid) {
    const scale = Math.max(0, ...list.map((b) => (b.amount.split('.')[1] ?? '').length));
    const per = new Map<string, Part[]>();
    let sum = 0n;
    for (const b of list) {
      const v = toUnits(b.amount, scale);
      sum += v;
      per.set(b.day, [{ value: (per.get(b.day)?.[0]?.value ?? 0n) + v, color: '#15803d', label: `Paid ${cur}` }]);
    }
    totals.push([cur, fromUnits(sum, scale, list[0]!.rail === 'card'), String(list.reduce((a, b) => a + b.orders, 0))]);
    volume.push(
      h('h2', {}, `Paid volume per day, ${cur}`),
      barChart(days, per, (v) => fromUnits(v, scale), `Paid volume in ${cur} per day over ${o.days} days, ${fromUnits(sum, scale)} ${cur} in total`),
    );
  }
  return page(
    'Overview',
    h('p', {}, `Orders of the last ${o.days} days (UTC dates), every rail. Hover a bar for its numbers.`),
    h('h2', {}, 'Orders per day'),
    barChart(days, counts, (v) => v.toString(), `Orders per day over ${o.days} days, ${total} in total, stacked by status`),
    h(
      'ul',
      { class: 'legend' },
      STATUSES.map((s) => h('li', { title: s }, h('span', { class: `swatch s-${s}`, 'aria-hidden': 'true' }), `${STATUS_LABELS[s]}: ${byStatus.get(s) ?? 0}`)),
    ),
    ...volume,
    table('Paid volume by currency or token', ['Currency or token', 'Paid volume', 'Paid orders'], totals.length ? totals : [['—', '0', '0']]),
  );
}
