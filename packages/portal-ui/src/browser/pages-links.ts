// Quick-pay in the portal: products (create, edit, deactivate), payment links (create, share with a
// QR code, deactivate) and a link's sessions with the payer's reference (memo).
import { api, can, type Session } from './api.ts';
import { h } from '@tollgate/checkout-ui/dom';
import { field, fmtTime, message, page, qrSvg, status, table } from './ui.ts';

const input = (name: string, extra: Record<string, string> = {}) => h('input', { name, autocomplete: 'off', ...extra });
const price = (p: any) => [p.price ? `${p.price} (crypto)` : '', p.fiat_amount ? `${p.fiat_amount} ${p.fiat_currency} (card)` : ''].filter(Boolean).join(' · ') || '—';
/** The fields a form filled in: empty ones left out (the server keeps or defaults them). */
const values = (els: HTMLInputElement[]) => Object.fromEntries(els.filter((e) => e.value.trim()).map((e) => [e.name, e.name === 'inventory' || e.name === 'max_payments' ? Number(e.value) : e.value.trim()]));

export async function linksPage(s: Session, note?: Node): Promise<HTMLElement> {
  const [products, links] = await Promise.all([api<any>('GET', 'products'), api<any>('GET', 'payment-links')]);
  const dev = can(s, 'developer');
  const out = h('div', { class: 'out' }, note);
  // A change rebuilds the page from the server's lists (nothing stale), its answer shown on top.
  const act = (fn: () => Promise<Node>) => async (e: Event) => {
    e.preventDefault();
    try {
      const shown = await fn();
      section.replaceWith(await linksPage(s, shown));
    } catch (err) {
      out.replaceChildren(message((err as Error).message, 'error'));
    }
  };
  const names = new Map(products.data.map((p: any) => [p.product_id, p.name]));

  // One form creates a product or, after Edit, saves that product.
  const pf = [
    input('name', { required: '' }),
    input('price', { inputmode: 'decimal', placeholder: '9.99' }),
    input('fiat_currency', { placeholder: 'EUR', maxlength: '3' }),
    input('fiat_amount', { inputmode: 'decimal', placeholder: '9.50' }),
    input('inventory', { inputmode: 'numeric', placeholder: 'unlimited' }),
  ];
  let editing: string | undefined;
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create product');
  const edit = (p: any) => () => {
    editing = p.product_id;
    for (const e of pf) e.value = p[e.name] === undefined ? '' : String(p[e.name]);
    submit.textContent = `Save ${p.name}`;
    pf[0]!.focus();
  };
  const productForm = h(
    'form',
    {
      class: 'inline',
      'aria-label': 'Product',
      onsubmit: act(async () => {
        const p = await api<any>('POST', editing ? `products/${editing}` : 'products', values(pf));
        return message(`${editing ? 'Saved' : 'Created'} product ${p.name} (${p.product_id}).`);
      }),
    },
    field('Product name', pf[0]!),
    field('Crypto price', pf[1]!),
    field('Card currency', pf[2]!),
    field('Card amount', pf[3]!),
    field('Inventory', pf[4]!),
    submit,
  );

  const lf = {
    product: h(
      'select',
      { name: 'product_id' },
      h('option', { value: '' }, 'Any amount (payer chooses)'),
      products.data.filter((p: any) => p.active).map((p: any) => h('option', { value: p.product_id }, p.name)),
    ),
    min: input('min_amount', { inputmode: 'decimal' }),
    max: input('max_amount', { inputmode: 'decimal' }),
    rails: input('payment_rails', { placeholder: 'crypto,card', value: 'crypto' }),
    limit: input('max_payments', { inputmode: 'numeric', placeholder: 'unlimited' }),
  };
  const linkForm = h(
    'form',
    {
      class: 'inline',
      'aria-label': 'Payment link',
      onsubmit: act(async () => {
        const l = await api<any>('POST', 'payment-links', { ...values([lf.min, lf.max, lf.rails, lf.limit]), ...(lf.product.value ? { product_id: lf.product.value } : {}) });
        return message(`Created payment link ${l.link_id}: ${l.url}`);
      }),
    },
    field('Sells', lf.product),
    field('Smallest amount', lf.min, 'any-amount links'),
    field('Largest amount', lf.max),
    field('Rails', lf.rails),
    field('Payments at most', lf.limit),
    h('button', { type: 'submit', class: 'primary' }, 'Create link'),
  );

  const share = (l: any) => async () => {
    const r = await api<any>('GET', `payment-links/${l.link_id}/share`);
    out.replaceChildren(
      h(
        'div',
        { class: 'card share' },
        h('h2', {}, `Share ${names.get(l.product_id) ?? 'any-amount link'}`),
        qrSvg(r.qr, `QR code of ${r.url}`),
        h('code', { class: 'secret' }, r.url),
        h('button', { type: 'button', onclick: () => void navigator.clipboard?.writeText(r.url) }, 'Copy link'),
      ),
    );
    out.scrollIntoView();
  };
  const active = (x: any) => (x.active ? 'active' : 'deactivated');
  const section = page(
    'Products and payment links',
    h('p', {}, 'A payment link is a page your customers pay on, by crypto or card; a product gives it a fixed price and stock.'),
    out,
    h('h2', {}, 'Products'),
    products.data.length
      ? table(
          'Products',
          ['Product', 'Price', 'Inventory', 'State', ''],
          products.data.map((p: any) => [
            p.name,
            price(p),
            p.inventory === undefined ? 'unlimited' : String(p.inventory),
            active(p),
            dev
              ? h(
                  'span',
                  { class: 'actions' },
                  h('button', { type: 'button', onclick: edit(p) }, 'Edit'),
                  h(
                    'button',
                    { type: 'button', class: p.active ? 'danger' : '', onclick: act(async () => message(`${(await api<any>('POST', `products/${p.product_id}`, { active: !p.active })).name} ${p.active ? 'deactivated' : 'activated'}.`)) },
                    p.active ? 'Deactivate' : 'Activate',
                  ),
                )
              : '',
          ]),
        )
      : h('p', {}, 'No products yet.'),
    dev ? productForm : null,
    h('h2', {}, 'Payment links'),
    links.data.length
      ? table(
          'Payment links',
          ['Link', 'Sells', 'Rails', 'Payments at most', 'State', ''],
          links.data.map((l: any) => [
            h('a', { href: `#/links/${l.link_id}` }, l.link_id),
            l.product_id ? (names.get(l.product_id) ?? l.product_id) : `any amount ${l.min_amount}–${l.max_amount}`,
            l.payment_rails.join(', '),
            l.max_payments === undefined ? 'unlimited' : String(l.max_payments),
            active(l),
            h(
              'span',
              { class: 'actions' },
              h('button', { type: 'button', 'data-share': l.link_id, onclick: share(l) }, 'Share'),
              dev && l.active
                ? h('button', { type: 'button', class: 'danger', onclick: act(async () => message(`Payment link ${(await api<any>('POST', `payment-links/${l.link_id}`, { active: false })).link_id} deactivated: no new sessions.`)) }, 'Deactivate')
                : null,
            ),
          ]),
        )
      : h('p', {}, 'No payment links yet.'),
    dev ? linkForm : null,
  );
  return section;
}

export async function linkSessionsPage(id: string): Promise<HTMLElement> {
  const r = await api<any>('GET', `payment-links/${encodeURIComponent(id)}/sessions`);
  return page(
    `Sessions of ${id}`,
    h('p', {}, h('a', { href: '#/links' }, 'All products and links')),
    r.data.length
      ? table(
          'Sessions',
          ['Session', 'Status', 'Rail', 'Amount', 'Payer reference', 'Order', 'Created'],
          r.data.map((x: any) => [x.session_id, x.status, x.rail, x.amount, x.memo ?? '—', x.order_id ? h('span', {}, h('a', { href: `#/orders/${x.order_id}` }, x.order_id), ' ', status(x.order_status)) : '—', fmtTime(x.created_at)]),
        )
      : h('p', { role: 'status' }, 'No sessions yet.'),
  );
}
