// Shared page pieces: headings, tables, forms, messages, the one-time secret box.
import { h } from '@tollgate/checkout-ui/dom';

export function page(title: string, ...children: (Node | string | false | null | undefined)[]): HTMLElement {
  document.title = `${title} · Tollgate portal`;
  return h('section', { 'aria-labelledby': 'page-title' }, h('h1', { id: 'page-title', tabindex: '-1' }, title), ...children);
}

/** A table that scrolls sideways on a narrow screen instead of overflowing the page. */
export function table(caption: string, head: string[], rows: (Node | string)[][]): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: '0' },
    h('table', {}, h('caption', { class: 'sr-only' }, caption), h('thead', {}, h('tr', {}, head.map((c) => h('th', { scope: 'col' }, c)))), h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c)))))),
  );
}

export function field(label: string, input: HTMLElement, hint?: string): HTMLElement {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 8)}`;
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('small', {}, hint) : null);
}

export function select(name: string, options: [string, string][], value = ''): HTMLSelectElement {
  return h('select', { name }, options.map(([v, l]) => h('option', { value: v, ...(v === value ? { selected: true } : {}) }, l)));
}

/** A status line announced to screen readers. */
export function message(text: string, kind: 'error' | 'ok' = 'ok'): HTMLElement {
  return h('p', { class: `msg ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** A secret shown once, with a copy button. */
export function secretBox(label: string, value: string): HTMLElement {
  const code = h('code', { class: 'secret', 'data-secret': label }, value);
  return h(
    'div',
    { class: 'once', role: 'status' },
    h('strong', {}, `${label} (shown only once: store it now)`),
    code,
    h('button', { type: 'button', onclick: () => void navigator.clipboard?.writeText(value) }, 'Copy'),
  );
}

export const fmtTime = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
export const short = (s: string, n = 10) => (s.length > n * 2 + 1 ? `${s.slice(0, n)}…${s.slice(-6)}` : s);
