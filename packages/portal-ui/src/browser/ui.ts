// Shared page pieces: headings, tables, forms, messages, the one-time secret box.
import { h } from '@tollgate/checkout-ui/dom';

export function page(title: string, ...children: (Node | string | false | null | undefined)[]): HTMLElement {
  document.title = `${title} · Tollgate portal`;
  return h('section', { 'aria-labelledby': 'page-title' }, h('h1', { id: 'page-title', tabindex: '-1' }, title), ...children);
}

/**
 * A table. On a narrow screen (portal.css, max-width 700px) each row becomes a card whose cells
 * are labelled by their column (data-label), rather than columns clipped off the side; the ARIA
 * roles keep it a table for screen readers when CSS makes the rows blocks.
 */
export function table(caption: string, head: string[], rows: (Node | string)[][]): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: '0' },
    h(
      'table',
      { role: 'table' },
      h('caption', { class: 'sr-only' }, caption),
      h(
        'thead',
        { role: 'rowgroup' },
        h(
          'tr',
          { role: 'row' },
          head.map((c) => h('th', { scope: 'col', role: 'columnheader' }, c)),
        ),
      ),
      h(
        'tbody',
        { role: 'rowgroup' },
        rows.map((r) =>
          h(
            'tr',
            { role: 'row' },
            r.map((c, i) => h('td', { role: 'cell', ...(head[i] ? { 'data-label': head[i] } : {}) }, c)),
          ),
        ),
      ),
    ),
  );
}

/** What a merchant reads for each order status; the enum itself is on hover (title) and in the API. */
export const STATUS_LABELS: Record<string, string> = {
  CHECKOUT_VERIFIED: 'Awaiting payment',
  PAYMENT_CONFIRMED: 'Paid, confirming',
  INVOICED: 'Paid',
  FAILED: 'Failed',
  EXPIRED: 'Expired',
  CANCELLED: 'Cancelled',
};

/** A status as a labelled badge: the human label, the enum on hover and for assistive tech. */
export function status(s: string, held?: boolean): HTMLElement {
  const label = held ? 'Paid, on hold' : (STATUS_LABELS[s] ?? s);
  return h('span', { class: `badge s-${s}`, title: s }, label, h('span', { class: 'sr-only' }, ` (${s})`));
}

export function field(label: string, input: HTMLElement, hint?: string): HTMLElement {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 8)}`;
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('small', {}, hint) : null);
}

export function select(name: string, options: [string, string][], value = ''): HTMLSelectElement {
  return h(
    'select',
    { name },
    options.map(([v, l]) => h('option', { value: v, ...(v === value ? { selected: true } : {}) }, l)),
  );
}

/** A status line announced to screen readers. */
export function message(text: string, kind: 'error' | 'ok' = 'ok'): HTMLElement {
  return h('p', { class: `msg ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** A secret shown once, with a copy button. */
export function secretBox(label: string, value: string): HTMLElement {
  const code = h('code', { class: 'secret', 'data-secret': label }, value);
  return h('div', { class: 'once', role: 'status' }, h('strong', {}, `${label} (shown only once: store it now)`), code, h('button', { type: 'button', onclick: () => void navigator.clipboard?.writeText(value) }, 'Copy'));
}

export const fmtTime = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
export const short = (s: string, n = 10) => (s.length > n * 2 + 1 ? `${s.slice(0, n)}…${s.slice(-6)}` : s);

const SVGNS = 'http://www.w3.org/2000/svg';
/** An SVG element from attributes only (no markup). */
export function svg(tag: string, attrs: Record<string, string | number>, ...kids: (Node | string)[]): SVGElement {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const k of kids) el.append(k);
  return el;
}

/** The server's QR path (portal/qr.ts) as an SVG: the one QR drawing of the portal. */
export function qrSvg(qr: { size: number; path: string }, label: string): SVGElement {
  return svg('svg', { viewBox: `0 0 ${qr.size} ${qr.size}`, role: 'img', 'aria-label': label, 'shape-rendering': 'crispEdges', class: 'qr' }, svg('rect', { width: qr.size, height: qr.size, fill: '#fff' }), svg('path', { d: qr.path, fill: '#000' }));
}

/** Labelled facts (a definition list); empty values are left out. */
export function facts(list: [string, string | Node | undefined | null][]): HTMLElement {
  return h(
    'dl',
    { class: 'facts' },
    list.filter(([, v]) => v !== undefined && v !== null && v !== '').map(([k, v]) => [h('dt', {}, k), h('dd', {}, v!)]),
  );
}

/**
 * A page that sets a password with a single-use token (an invitation, a reset link): one field,
 * one button; `submit` sends it and moves on, a refusal is shown in place.
 */
export function newPasswordPage(o: { title: string; label: string; button: string; submit: (password: string, out: HTMLElement) => Promise<void> }): HTMLElement {
  const out = h('div', {});
  const pw = h('input', { type: 'password', name: 'password', autocomplete: 'new-password', minlength: '12', required: true });
  return page(
    o.title,
    out,
    h(
      'form',
      {
        class: 'card',
        onsubmit: async (e: Event) => {
          e.preventDefault();
          try {
            await o.submit(pw.value, out);
          } catch (err) {
            out.replaceChildren(message((err as Error).message, 'error'));
          }
        },
      },
      field(o.label, pw, '12 characters or more'),
      h('button', { type: 'submit', class: 'primary' }, o.button),
    ),
  );
}
