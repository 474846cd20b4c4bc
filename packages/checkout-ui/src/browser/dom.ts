// A tiny DOM builder: text always goes in through text nodes, never innerHTML, so nothing from the
// session (merchant name, line items) can become markup. The merchant portal builds its pages with it too.

type Child = Node | string | number | false | null | undefined | Child[];
type AttrValue = string | number | boolean | undefined | null | ((e: Event) => void);

/**
 * @example h('button', { type: 'button', class: 'primary', onclick: pay }, 'Pay')
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, AttrValue> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

/** Replaces the children of `el`. */
export function replace(el: Element, ...children: Child[]): void {
  el.textContent = '';
  append(el, children);
}

/** Sets text only when it changed (live regions announce every write). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/** The tab's sessionStorage, or undefined where the browser refuses it (privacy modes, sandboxed frames). */
export function sessionStore(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

/** A form field and the message under it (both pages' address and amount fields). */
type Field = { input: HTMLInputElement; err: HTMLElement };

/** Shows `text` under the field, marks it invalid for assistive technology and focuses it. */
export function fieldError(f: Field, text: string): void {
  f.err.hidden = false;
  setText(f.err, text);
  f.input.setAttribute('aria-invalid', 'true');
  f.input.focus();
}

export function clearError(f: Field): void {
  f.err.hidden = true;
  f.input.removeAttribute('aria-invalid');
}
