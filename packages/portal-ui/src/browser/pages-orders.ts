// Orders list (search, filters, keyset pages) and order detail, each rail as what it is: a card order
// shows its processor, reference, card and fiat amount; a DELEGATE order its callback and settlement.
import { api, can, qs, type Session } from './api.ts';
import { h, replace } from '@tollgate/checkout-ui/dom';
import { ORDER_STATUSES as STATUSES } from '@tollgate/protocol/states';
import { loadChunk } from '../../../checkout-ui/src/browser/chunk.ts';
import type { commerce } from './commerce.ts';
import { facts, field, fmtTime, message, page, select, short, status, STATUS_LABELS, table } from './ui.ts';

interface OrderRow {
  order_id: string;
  dapp_order_id: string;
  flow: string;
  chain_id: number;
  token_symbol: string;
  from_address: string;
  amount: string;
  status: string;
  tx_hash?: string;
  created_at: string;
  rail: 'crypto' | 'card';
  processor?: string;
  fiat_currency?: string;
  fiat_amount?: string;
  payment_reference?: string;
  callback_status?: string;
}

const DIRECT_FLOWS = ['DIRECT', 'SOL_DIRECT'];
const isDelegate = (o: { flow: string; rail?: string }) => o.rail !== 'card' && !o.flow.startsWith('FIAT_') && !DIRECT_FLOWS.includes(o.flow);
/** How the order is paid: "Card · TEST", "DIRECT · chain 8453", "ERC20_3009 · chain 8453 · callback failed". */
const railText = (o: OrderRow) => (o.rail === 'card' ? `Card · ${o.processor}` : `${o.flow} · chain ${o.chain_id}${o.callback_status ? ` · callback ${o.callback_status}` : ''}`);
const amountText = (o: OrderRow) => (o.rail === 'card' ? `${o.fiat_amount} ${o.fiat_currency}` : `${o.amount} ${o.token_symbol}`);

export async function ordersPage(params: URLSearchParams): Promise<HTMLElement> {
  const q = h('input', { type: 'search', name: 'q', value: params.get('q') ?? '', placeholder: 'order id, reference, payer or tx hash', autocomplete: 'off' });
  const statusSel = select('status', [['', 'any status'], ...STATUSES.map((s): [string, string] => [s, STATUS_LABELS[s]!])], params.get('status') ?? '');
  const flow = h('input', { name: 'flow', value: params.get('flow') ?? '', placeholder: 'DIRECT' });
  const chain = h('input', { name: 'chain_id', value: params.get('chain_id') ?? '', inputmode: 'numeric' });
  const token = h('input', { name: 'token', value: params.get('token') ?? '', placeholder: 'USDC' });
  const from = h('input', { type: 'date', name: 'from', value: params.get('from') ?? '' });
  const to = h('input', { type: 'date', name: 'to', value: params.get('to') ?? '' });
  const form = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      onsubmit: (e: Event) => {
        e.preventDefault();
        const p = new URLSearchParams();
        for (const el of [q, statusSel, flow, chain, token, from, to]) if (el.value.trim()) p.set(el.name, el.value.trim());
        location.hash = `#/orders?${p}`;
      },
    },
    field('Search', q),
    field('Status', statusSel),
    // The rarer filters fold away (a 375-px screen shows the list without scrolling past them).
    h(
      'details',
      { class: 'more', ...(['flow', 'chain_id', 'token', 'from', 'to'].some((k) => params.get(k)) ? { open: true } : {}) },
      h('summary', {}, 'More filters'),
      h('div', { class: 'inline' }, field('Flow', flow), field('Chain id', chain), field('Token', token), field('Created from', from), field('Created before', to)),
    ),
    h('button', { type: 'submit', class: 'primary' }, 'Search'),
  );
  const filters: Record<string, string | undefined> = {};
  for (const k of ['q', 'status', 'flow', 'chain_id', 'token', 'from', 'to', 'cursor']) filters[k] = params.get(k) ?? undefined;
  const res = await api<{ orders: OrderRow[]; next: string | null }>('GET', `orders${qs(filters)}`);
  const rows = res.orders.map((o) => [
    h('a', { href: `#/orders/${encodeURIComponent(o.order_id)}` }, o.order_id),
    h('span', { title: o.dapp_order_id }, short(o.dapp_order_id, 14)),
    status(o.status),
    amountText(o),
    railText(o),
    // A card order has no payer address (its from_address is an opaque value): its processor reference instead.
    o.rail === 'card' ? (o.payment_reference ? h('code', { title: o.payment_reference }, short(o.payment_reference, 8)) : '—') : h('code', { title: o.from_address }, short(o.from_address, 6)),
    fmtTime(o.created_at),
  ]);
  const nextParams = new URLSearchParams(params);
  if (res.next) nextParams.set('cursor', res.next);
  return page(
    'Orders',
    form,
    h('p', { class: 'export' }, 'Export for accounting: ', h('a', { href: '#/exports' }, 'CSV of orders and payments')),
    rows.length ? table('Orders', ['Order', 'Reference', 'Status', 'Amount', 'Rail', 'Payer or card ref.', 'Created'], rows) : h('p', { role: 'status' }, 'No orders match.'),
    h('nav', { 'aria-label': 'Pages', class: 'pager' }, params.get('cursor') ? h('a', { href: '#/orders' }, 'First page') : null, res.next ? h('a', { href: `#/orders?${nextParams}`, rel: 'next' }, 'Next page') : null),
  );
}

const link = (url: string | undefined, text: string) => (url ? h('a', { href: url, rel: 'noopener noreferrer', target: '_blank' }, text) : h('code', {}, text));
const BRANDS: Record<string, string> = { visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express' };

/** Card orders: the payment at the processor, never a chain, token or payer address. */
function cardFacts(d: any): [string, string | Node | undefined][] {
  const o = d.order,
    c = d.card ?? {};
  return [
    ['Amount', `${o.fiat_amount} ${o.fiat_currency}`],
    ['Processor', c.processor],
    ['Processor reference', o.payment_reference ? h('code', {}, o.payment_reference) : 'not assigned yet'],
    ['Card', c.last4 ? `${BRANDS[c.brand] ?? c.brand ?? 'Card'} •••• ${c.last4}` : c.state === 'succeeded' || c.state === 'refunded' ? 'not reported by the processor' : 'no successful payment yet'],
    ['Processor state', c.state],
    ['Last decline', c.decline_code],
    ['Charges', c.charges > 1 ? `${c.charges} (duplicate payment)` : undefined],
    ['Dispute', o.dispute_status ?? 'none'],
    ['Held because', o.held_reasons?.join(', ')],
  ];
}

/** Crypto orders: chain, token, payer, transaction; DELEGATE adds the callback and its settlement. */
function cryptoFacts(d: any): [string, string | Node | undefined][] {
  const o = d.order;
  const out: [string, string | Node | undefined][] = [
    ['Amount', `${d.amount} ${o.token_symbol} (${o.amount_wei} in the smallest unit, ${d.decimals} decimals)`],
    ['Flow', o.flow],
    ['Chain', String(o.chain_id)],
    ['Payer', o.from_address],
    ['Pay to', o.pay_to_address],
    ['Transaction', o.tx_hash ? link(d.explorer_url, o.tx_hash) : '—'],
  ];
  if (isDelegate(o)) {
    out.push(
      ['Callback', o.callback_status ?? 'not run yet'],
      ['Failure reason', o.failure_reason],
      ['Settlement transaction', o.settlement_tx_hash ? link(d.settlement_explorer_url, o.settlement_tx_hash) : 'none yet'],
      ['Settled', o.settled_at ? fmtTime(o.settled_at) : undefined],
    );
  } else out.push(['Failure reason', o.failure_reason]);
  return out;
}

/**
 * What is known of refunds today: the card's refunded amount, a DELEGATE refund transaction. The
 * refund actions (per rail and role) belong in this section: it is the slot they fill.
 */
function refundSection(d: any, panel: Node): HTMLElement {
  const o = d.order;
  const state = d.rail === 'card' ? (o.refunded_amount ? `Refunded ${o.refunded_amount} ${o.fiat_currency}` : 'No refund') : o.refund_tx_hash ? h('span', {}, 'Refunded to the payer: ', link(d.refund_explorer_url, o.refund_tx_hash)) : 'No refund';
  return h('section', { id: 'refunds', 'data-slot': 'refunds', 'aria-labelledby': 'refunds-title' }, h('h2', { id: 'refunds-title' }, 'Refunds'), h('p', { 'data-refund-state': '' }, state), panel);
}

export async function orderPage(id: string, session: Session): Promise<HTMLElement> {
  const d = await api<any>('GET', `orders/${encodeURIComponent(id)}`);
  const o = d.order;
  const card = d.rail === 'card';
  const out = h('div', {});
  const deliveries = h('div', {});
  const renderDeliveries = (list: any[]) =>
    replace(
      deliveries,
      list.length
        ? table(
            'Webhook deliveries of this order',
            ['Delivery', 'Event', 'Status', 'Attempts', 'Last', ''],
            list.map((x) => [
              x.delivery_id,
              x.event,
              x.status,
              String(x.attempt_count),
              x.last_status_code ? String(x.last_status_code) : (x.last_error ?? '—'),
              can(session, 'developer')
                ? h(
                    'button',
                    {
                      type: 'button',
                      'data-redeliver': x.delivery_id,
                      onclick: async () => {
                        try {
                          const r = await api('POST', `webhook-deliveries/${encodeURIComponent(x.delivery_id)}/redeliver`);
                          out.replaceChildren(message(`Delivery ${r.result}: ${r.delivery.delivery_id}`));
                        } catch (e) {
                          out.replaceChildren(message((e as Error).message, 'error'));
                        }
                      },
                    },
                    'Redeliver',
                  )
                : '',
            ]),
          )
        : h('p', {}, 'No webhook deliveries for this order.'),
    );
  renderDeliveries(d.deliveries);
  return page(
    `Order ${o.order_id}`,
    facts([
      ['Status', status(o.status, card && o.status === 'PAYMENT_CONFIRMED' && o.held_reasons?.length > 0)],
      ['Rail', card ? 'Card' : isDelegate(o) ? 'Crypto, DELEGATE' : 'Crypto'],
      ['Reference', o.dapp_order_id],
      ...(card ? cardFacts(d) : cryptoFacts(d)),
      ['Fee', d.fee],
      ['Created', fmtTime(o.created_at)],
    ]),
    refundSection(d, (await loadChunk<typeof commerce>('commerce')).refundPanel(o.order_id, o, session)),
    h('h2', {}, 'Timeline'),
    h(
      'ol',
      { class: 'timeline' },
      d.timeline.map((t: any) => h('li', {}, `${fmtTime(t.at)}: `, t.from_status ? status(t.from_status) : 'created', ' → ', status(t.to_status), ` (${t.trigger})`)),
    ),
    card ? null : h('h2', {}, 'Transfers seen'),
    card
      ? null
      : o.observed_transfers?.length
        ? table(
            'Transfers',
            ['Tx', 'Kind', 'Amount (smallest unit)', 'Confirmations', 'Orphaned'],
            o.observed_transfers.map((t: any) => [short(t.tx_hash, 8), t.kind, t.amount_wei, String(t.confirmations), t.orphaned ? 'yes' : 'no']),
          )
        : h('p', {}, 'No transfer recorded yet.'),
    card ? null : h('h2', {}, 'Proof'),
    card ? null : d.proof ? h('pre', { class: 'proof', tabindex: '0' }, JSON.stringify(d.proof, null, 2)) : h('p', {}, 'No confirmed payment yet.'),
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
      ? table(
          'Checkout sessions',
          ['Session', 'Status', 'Price', 'Reference', 'Order', 'Return URL', 'Created'],
          r.sessions.map((s: any) => [
            short(s.checkout_id, 8),
            s.status,
            s.price ?? s.fiat ?? '—',
            s.client_reference_id ?? '—',
            s.order_id ? h('a', { href: `#/orders/${encodeURIComponent(s.order_id)}` }, s.order_id) : '—',
            s.success_url ?? '—',
            fmtTime(s.created_at),
          ]),
        )
      : h('p', { role: 'status' }, 'No checkout sessions yet.'),
    h('nav', { 'aria-label': 'Pages', class: 'pager' }, before ? h('a', { href: '#/checkout' }, 'First page') : null, r.next ? h('a', { href: `#/checkout?before=${encodeURIComponent(r.next)}`, rel: 'next' }, 'Next page') : null),
  );
}
