// "Copy" buttons for the values a payer pastes into another wallet (address, amount). The exact value
// sits in `data-copy`: what is copied is never re-read from the formatted, possibly wrapped text.
import { h, setText } from './dom.ts';

/**
 * A button that copies `value`; `what` names it for screen readers ("Copy address") and for the
 * message passed to `notify` (the page's live region). Without the Clipboard API (an insecure
 * origin, a refused permission) the payer is told to select and copy by hand.
 *
 * @example copyButton('0xabc…', 'address', say)
 */
export function copyButton(value: string, what: string, notify: (text: string) => void): HTMLButtonElement {
  const label = h('span', {}, 'Copy');
  const b = h('button', { type: 'button', class: 'copy', 'data-copy': value }, label, h('span', { class: 'visually-hidden' }, ` ${what}`));
  let reset: ReturnType<typeof setTimeout> | undefined;
  b.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value);
      setText(label, 'Copied');
      notify(`${what[0]!.toUpperCase()}${what.slice(1)} copied.`);
      clearTimeout(reset);
      reset = setTimeout(() => setText(label, 'Copy'), 2000);
    } catch {
      notify(`Copying is not available here: select the ${what} and copy it.`);
    }
  });
  return b;
}
