// Shared fixtures of the card-rail tests (card-*.test.ts, browser/card.test.ts).
import assert from 'node:assert/strict';
import type { Creds, TestServer } from '../helpers/server.ts';
import { setupMerchant } from '../helpers/orders.ts';
import { createSession } from './checkout-fixtures.ts';

export const CARD = {
  success: '4242 4242 4242 4242',
  decline: '4000 0000 0000 0002',
  insufficient: '4000 0000 0000 9995',
  delayed: '4000 0000 0000 3253',
  duplicate: '4000 0000 0000 1018',
  disputed: '4000 0000 0000 0259',
} as const;

/** A merchant with wallets, a fee balance and the card rail on. */
export async function setupCardMerchant(s: TestServer, topUp = '10.00'): Promise<Creds> {
  const m = await setupMerchant(s, { name: 'Card Shop', topUp });
  const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/card-rail`, { enabled: true });
  assert.equal(r.status, 200, r.text);
  return m;
}

/** A `crypto,fiat` session (9.99 in tokens, EUR 9.50 by card). */
export function createCardSession(s: TestServer, m: Creds, overrides: Record<string, unknown> = {}) {
  return createSession(s, m, { payment_rails: 'crypto,fiat', fiat_currency: 'EUR', fiat_amount: '9.50', ...overrides });
}

export function startCard(s: TestServer, checkoutId: string) {
  return s.request('POST', `/checkout/v1/sessions/${checkoutId}/card`, { body: {} });
}

export function payCard(s: TestServer, checkoutId: string, number: string) {
  return s.request('POST', `/checkout/v1/sessions/${checkoutId}/card/test-payment`, { body: { number, exp_month: 12, exp_year: 2099, cvc: '123' } });
}

/** The events written for an order, oldest first: [event, payload]. */
export async function eventsOf(s: TestServer, orderId: string): Promise<[string, any][]> {
  const { rows } = await s.db.query<{ event: string; payload: any }>('SELECT event, payload FROM webhook_events WHERE order_id = $1 ORDER BY seq', [orderId]);
  return rows.map((r) => [r.event, typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload]);
}

export async function sessionOf(s: TestServer, checkoutId: string): Promise<string> {
  const { rows } = await s.db.query<{ status: string }>('SELECT status FROM checkout_sessions WHERE id = $1', [checkoutId]);
  return rows[0]!.status;
}
