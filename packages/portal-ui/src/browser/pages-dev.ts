// Developer pages: webhooks (endpoints, deliveries, redeliver, test event), API keys, fees, exports.
import { api, can, type Session } from './api.ts';
import { h } from '@tollgate/checkout-ui/dom';
// The node-free module of @tollgate/protocol: the list the server validates and emits, so the portal
// offers every event and no name the server would refuse.
import { WEBHOOK_EVENTS, type WebhookEventName } from '@tollgate/protocol/webhook-events';
import { field, fmtTime, message, page, secretBox, select, short, table } from './ui.ts';

/**
 * One checkbox per event, the order lifecycle (`order.*` except the reconciliation ones) checked:
 * what an endpoint that fulfils orders needs; the merchant adds card, x402 or machine-payment events.
 */
function eventChoice(): { box: HTMLElement; chosen: () => string[] } {
  const byDefault = new Set<WebhookEventName>(['order.payment_confirmed', 'order.invoiced', 'order.expired', 'order.cancelled', 'order.failed']);
  const boxes = WEBHOOK_EVENTS.map((e) => h('input', { type: 'checkbox', name: 'events', value: e, checked: byDefault.has(e) }));
  const box = h(
    'fieldset',
    { class: 'events' },
    h('legend', {}, 'Events sent to the new endpoint'),
    boxes.map((b) => h('label', {}, b, ` ${b.value}`)),
  );
  return { box, chosen: () => boxes.filter((b) => b.checked).map((b) => b.value) };
}

function act(out: HTMLElement, fn: () => Promise<Node>) {
  return async (e: Event) => {
    e.preventDefault();
    try {
      out.replaceChildren(await fn());
    } catch (err) {
      out.replaceChildren(message((err as Error).message, 'error'));
    }
  };
}

export async function webhooksPage(session: Session): Promise<HTMLElement> {
  const [hooks, dels] = await Promise.all([api<any>('GET', 'webhooks'), api<any>('GET', 'webhook-deliveries')]);
  const out = h('div', { class: 'out' });
  const dev = can(session, 'developer');
  const url = h('input', { name: 'url', type: 'url', required: true, placeholder: 'https://shop.example/hooks/tollgate' });
  const testEvent = select(
    'event',
    WEBHOOK_EVENTS.map((e): [string, string] => [e, e]),
  );
  const events = eventChoice();
  const endpointsTable = (list: any[]) =>
    table(
      'Endpoints',
      ['Endpoint', 'URL', 'Events', 'Enabled', ''],
      list.map((w: any) => [
        w.webhook_id,
        w.url,
        w.events.join(', '),
        w.enabled ? 'yes' : 'no',
        dev ? h('button', { type: 'button', onclick: act(out, async () => secretBox('New signing secret', (await api('POST', `webhooks/${w.webhook_id}/rotate-secret`, {})).secret)) }, 'Rotate secret') : '',
      ]),
    );
  let endpoints = endpointsTable(hooks.webhooks);
  return page(
    'Webhooks',
    out,
    endpoints,
    dev
      ? h(
          'form',
          {
            class: 'inline',
            onsubmit: act(out, async () => {
              const chosen = events.chosen();
              if (chosen.length === 0) return message('Choose at least one event for the endpoint.', 'error');
              const made = await api<any>('POST', 'webhooks', { url: url.value, events: chosen });
              // The list as the server now has it, so the new endpoint shows without a reload.
              const fresh = endpointsTable((await api<any>('GET', 'webhooks')).webhooks);
              endpoints.replaceWith(fresh);
              endpoints = fresh;
              url.value = '';
              return secretBox('Signing secret', made.secret);
            }),
          },
          field('New endpoint URL', url),
          events.box,
          h('button', { type: 'submit' }, 'Add endpoint'),
        )
      : null,
    dev
      ? h(
          'form',
          {
            class: 'inline',
            onsubmit: act(out, async () => {
              const r = await api('POST', 'webhooks/test-event', { event: testEvent.value });
              return message(`Test event ${r.event_id} queued for ${r.deliveries} endpoint(s)`);
            }),
          },
          field('Test event', testEvent),
          h('button', { type: 'submit' }, 'Send test event'),
        )
      : null,
    h('h2', {}, 'Recent deliveries'),
    dels.deliveries.length
      ? table(
          'Deliveries',
          ['Delivery', 'Event', 'Order', 'Status', 'Attempts', 'Last answer', ''],
          dels.deliveries.map((d: any) => [
            d.delivery_id,
            d.event,
            d.order_id ? h('a', { href: `#/orders/${d.order_id}` }, d.order_id) : '—',
            d.status,
            String(d.attempt_count),
            d.last_status_code ? String(d.last_status_code) : (d.last_error ?? '—'),
            dev
              ? h(
                  'button',
                  {
                    type: 'button',
                    'data-redeliver': d.delivery_id,
                    onclick: act(out, async () => {
                      const r = await api('POST', `webhook-deliveries/${d.delivery_id}/redeliver`);
                      return message(`Delivery ${r.result}: ${r.delivery.delivery_id}`);
                    }),
                  },
                  'Redeliver',
                )
              : '',
          ]),
        )
      : h('p', {}, 'No deliveries yet.'),
  );
}

export async function keysPage(session: Session): Promise<HTMLElement> {
  const keys = await api<any>('GET', 'api-keys');
  const out = h('div', { class: 'out' });
  const dev = can(session, 'developer');
  const creds = (r: any) => h('div', {}, h('p', {}, `API key ${r.api_key}`, r.revoked ? ` (replaces ${r.revoked}, now revoked)` : ''), secretBox('API secret', r.api_secret));
  // Every change re-reads the list, so a new, rotated or revoked key shows at once (no reload).
  const then = (fn: () => Promise<Node>) =>
    act(out, async () => {
      const shown = await fn();
      list.replaceWith((list = render((await api<any>('GET', 'api-keys')).api_keys)));
      return shown;
    });
  const render = (ks: any[]): HTMLElement =>
    table(
      'API keys',
      ['Key', 'Created', 'State', ''],
      ks.map((k: any) => [
        k.api_key,
        fmtTime(k.created_at),
        k.revoked_at ? `revoked ${fmtTime(k.revoked_at)}` : 'active',
        dev && !k.revoked_at
          ? h(
              'span',
              { class: 'actions' },
              h('button', { type: 'button', 'data-rotate': k.api_key, onclick: then(async () => creds(await api('POST', `api-keys/${encodeURIComponent(k.api_key)}/rotate`))) }, 'Rotate'),
              h(
                'button',
                {
                  type: 'button',
                  class: 'danger',
                  onclick: then(async () => {
                    await api('POST', `api-keys/${encodeURIComponent(k.api_key)}/revoke`);
                    return message(`Revoked ${k.api_key}`);
                  }),
                },
                'Revoke',
              ),
            )
          : '',
      ]),
    );
  let list = render(keys.api_keys);
  return page(
    'API keys',
    h('p', {}, 'Your server signs requests with a key and its secret. A secret is shown once, when the key is made.'),
    out,
    list,
    dev ? h('button', { type: 'button', class: 'primary', onclick: then(async () => creds(await api('POST', 'api-keys'))) }, 'Create API key') : null,
  );
}

export async function feesPage(): Promise<HTMLElement> {
  const f = await api<any>('GET', 'fees');
  return page(
    'Fees',
    h(
      'dl',
      { class: 'facts' },
      ['available', 'reserved', 'captured'].map((k) => [h('dt', {}, k[0]!.toUpperCase() + k.slice(1)), h('dd', {}, f.balance[k])]),
    ),
    h('h2', {}, 'Ledger'),
    table(
      'Fee ledger',
      ['Entry', 'Kind', 'From', 'To', 'Amount', 'Order', 'Time'],
      f.entries.map((e: any) => [String(e.id), e.kind, e.from_account, e.to_account, e.amount, e.order_id ? short(e.order_id, 8) : '—', fmtTime(e.created_at)]),
    ),
  );
}

export function exportsPage(): HTMLElement {
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
  const from = h('input', { type: 'date', name: 'from', value: monthAgo, required: true });
  const to = h('input', { type: 'date', name: 'to', value: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10), required: true });
  const links = h('p', {});
  const update = () =>
    links.replaceChildren(
      h('a', { href: `/portal/api/exports/orders.csv?from=${from.value}&to=${to.value}`, download: '', 'data-export': 'orders' }, 'Download orders CSV'),
      ' · ',
      h('a', { href: `/portal/api/exports/payments.csv?from=${from.value}&to=${to.value}`, download: '', 'data-export': 'payments' }, 'Download payments CSV'),
    );
  from.addEventListener('change', update);
  to.addEventListener('change', update);
  update();
  return page('Exports', h('p', {}, `Orders created from the first date up to (not including) the second, UTC. Today is ${today}.`), h('div', { class: 'inline' }, field('From', from), field('Before', to)), links);
}

export async function callbacksPage(): Promise<HTMLElement> {
  const r = await api<any>('GET', 'callbacks');
  return page(
    'Callbacks',
    h('p', {}, 'DELEGATE mode: the contract each chain settles your orders to. The operator registers or replaces one (it decides where funds go).'),
    r.callbacks.length
      ? table(
          'Callback registrations',
          ['Chain', 'Callback contract', 'EIP-712 name', 'Version', 'Settlement contract', 'Since'],
          r.callbacks.map((c: any) => [String(c.chain_id), c.callback_contract, c.eip712_name, c.eip712_version, c.spent_address ?? '—', fmtTime(c.created_at)]),
        )
      : h('p', { role: 'status' }, 'No callback registered: orders are paid straight to your wallets (DIRECT).'),
  );
}
