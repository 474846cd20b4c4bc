// The order page's refund panel (docs/refunds.md): the order's refunds of any rail, and for owners
// (and the operator) a refund form with an amount. One component the order page places in its
// `refunds` slot; it reads and writes through the portal's refund routes only.
import { h, replace } from '@tollgate/checkout-ui/dom';
import { api, can, type Session } from './api.ts';
import { field, fmtTime, message, short, table } from './ui.ts';

interface Refund {
  refund_id: string;
  rail: string;
  amount: string;
  amount_base_units: string;
  currency: string;
  status: string;
  requested_by: string;
  created_at: string;
  refunded_amount: string;
  tx_hash?: string;
  processor_refund_id?: string;
  from_address?: string;
  to_address?: string;
  token_contract?: string;
  chain_id?: number;
}

/** Who may ask: owners and the operator. Which orders: paid ones, or a FAILED DELEGATE order (the server decides; its error is shown). */
const offered = (o: any) => ['PAYMENT_CONFIRMED', 'INVOICED'].includes(o.status) || (o.status === 'FAILED' && !o.refund_tx_hash && !o.flow.startsWith('FIAT_'));

/** What a pending DIRECT refund asks the merchant to send. */
const sendText = (r: Refund) => `Send exactly ${r.amount_base_units} base units (${r.amount} ${r.currency}) of ${r.token_contract} on chain ${r.chain_id} from ${r.from_address} to ${r.to_address}; Tollgate links the transfer.`;

export function refundPanel(orderId: string, order: any, session: Session): HTMLElement {
  const list = h('div', { 'data-refund-list': '' });
  const note = h('div', {});
  const path = `orders/${encodeURIComponent(orderId)}/refunds`;
  const render = (rs: Refund[]) => {
    replace(
      list,
      rs.length
        ? table(
            'Refunds of this order',
            ['Refund', 'Rail', 'Amount', 'Status', 'Reference', 'Asked'],
            rs.map((r) => [r.refund_id, r.rail, `${r.amount} ${r.currency}`, r.status, short(r.tx_hash ?? r.processor_refund_id ?? '—', 8), `${fmtTime(r.created_at)} (${r.requested_by})`]),
          )
        : h('p', {}, 'No refund recorded.'),
    );
    const waiting = rs.find((r) => r.rail === 'direct' && r.status === 'pending');
    if (waiting) list.append(message(sendText(waiting)));
  };
  void api<{ refunds: Refund[] }>('GET', path).then(
    (r) => render(r.refunds),
    (e: Error) => replace(list, message(e.message, 'error')),
  );
  if (!can(session, 'owner') || !offered(order)) return h('div', {}, list, note);

  const amount = h('input', { name: 'amount', inputmode: 'decimal', autocomplete: 'off', placeholder: 'all that remains' });
  const reason = h('input', { name: 'reason', maxlength: '200', autocomplete: 'off' });
  const button = h('button', { type: 'submit' }, 'Refund');
  const form = h(
    'form',
    {
      class: 'inline',
      'data-refund-form': '',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        button.disabled = true;
        try {
          const body: Record<string, string> = {};
          if (amount.value.trim()) body.amount = amount.value.trim();
          if (reason.value.trim()) body.reason = reason.value.trim();
          const r = await api<Refund>('POST', path, body);
          replace(note, message(`Refund ${r.refund_id}: ${r.amount} ${r.currency}, ${r.status}.`));
          form.closest('section')?.querySelector('[data-refund-state]')?.replaceChildren(`Refunded ${r.refunded_amount} ${r.currency}`);
          amount.value = '';
          render((await api<{ refunds: Refund[] }>('GET', path)).refunds);
        } catch (err) {
          replace(note, message((err as Error).message, 'error'));
        } finally {
          button.disabled = false;
        }
      },
    },
    field(`Amount (${order.fiat_currency ?? order.token_symbol})`, amount, 'empty: everything not yet refunded'),
    field('Reason (optional)', reason),
    button,
  );
  return h('div', {}, list, form, note);
}
