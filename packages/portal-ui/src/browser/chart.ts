// The overview's bar charts: one bar per UTC day, stacked parts, a y axis with values and an x axis
// with dates. Values are bigints (order counts, or amounts in an exact base unit) so the tick labels
// are exact; only the bar geometry is a float.
import { svg } from './ui.ts';

export interface Part {
  value: bigint;
  color: string;
  label: string;
}

const W = 640,
  H = 230,
  L = 64,
  R = 8,
  T = 12,
  B = 30;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** 2026-11-27 → "Nov 27". */
const dayLabel = (d: string) => `${MONTHS[Number(d.slice(5, 7)) - 1]} ${Number(d.slice(8, 10))}`;

/** The smallest 1, 2 or 5 × 10^k that is at least `v` (v ≥ 1). */
function niceStep(v: bigint): bigint {
  let p = 1n;
  for (;;) {
    for (const m of [1n, 2n, 5n]) if (m * p >= v) return m * p;
    p *= 10n;
  }
}

/** The last `n` UTC days up to `now`, oldest first, as YYYY-MM-DD. */
export function lastDays(n: number, now = Date.now()): string[] {
  const out: string[] = [];
  for (let i = n - 1; i >= 0; i--) out.push(new Date(now - i * 86_400_000).toISOString().slice(0, 10));
  return out;
}

/**
 * Stacked bars of `parts` per day. `fmt` writes an axis value; `label` describes the chart to
 * assistive technology (the numbers are in the tables and legends beside it, and each bar's title).
 */
export function barChart(days: string[], parts: Map<string, Part[]>, fmt: (v: bigint) => string, label: string): SVGElement {
  const totals = days.map((d) => (parts.get(d) ?? []).reduce((a, p) => a + p.value, 0n));
  const max = totals.reduce((a, t) => (t > a ? t : a), 0n);
  const step = niceStep(max > 4n ? (max + 3n) / 4n : 1n);
  const ticks = max <= 0n ? 1n : (max + step - 1n) / step;
  const top = step * ticks;
  const ih = H - T - B,
    iw = W - L - R,
    bw = iw / days.length;
  const y = (v: bigint) => T + ih - (Number(v) / Number(top)) * ih;
  const kids: Node[] = [];
  for (let i = 0n; i <= ticks; i++) {
    const v = i * step,
      yy = y(v);
    kids.push(svg('line', { x1: L, x2: W - R, y1: yy, y2: yy, stroke: i === 0n ? '#6b7280' : '#e5e7eb' }));
    kids.push(svg('text', { x: L - 6, y: yy + 4, 'text-anchor': 'end', class: 'tick' }, fmt(v)));
  }
  const every = Math.ceil(days.length / 6);
  days.forEach((d, i) => {
    const x = L + i * bw;
    let base = 0n;
    for (const p of parts.get(d) ?? []) {
      if (p.value <= 0n) continue;
      const y0 = y(base),
        y1 = y(base + p.value);
      base += p.value;
      kids.push(svg('rect', { x: x + 1, y: y1, width: Math.max(bw - 2, 1), height: Math.max(y0 - y1, 0.5), fill: p.color }, svg('title', {}, `${dayLabel(d)} · ${p.label}: ${fmt(p.value)}`)));
    }
    if ((days.length - 1 - i) % every === 0) {
      kids.push(svg('line', { x1: x + bw / 2, x2: x + bw / 2, y1: T + ih, y2: T + ih + 4, stroke: '#6b7280' }));
      // The newest day's label ends at the right edge rather than past it.
      const last = i === days.length - 1;
      kids.push(svg('text', { x: last ? W - R : x + bw / 2, y: H - 8, 'text-anchor': last ? 'end' : 'middle', class: 'tick' }, dayLabel(d)));
    }
  });
  return svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': label, class: 'chart' }, ...kids);
}

/** A decimal string → bigint at `scale` decimals (exact). */
export function toUnits(x: string, scale: number): bigint {
  const [i, f = ''] = x.split('.');
  return BigInt(i! + f.padEnd(scale, '0').slice(0, scale));
}

/** bigint at `scale` decimals → decimal string; without trailing zeros unless `keep` (9.50 EUR). */
export function fromUnits(v: bigint, scale: number, keep = false): string {
  const s = v.toString().padStart(scale + 1, '0');
  const d = scale ? `${s.slice(0, -scale)}.${s.slice(-scale)}` : s;
  return keep ? d : d.replace(/\.0+$|(\.\d*?)0+$/, '$1');
}
