// Wire schemas of the portal JSON routes (/portal/api/…). Never a secret in a view, except the
// one-time fields named `*_secret`/`secret`/`invitation_url` of the answers that create them.
import { Type } from '@sinclair/typebox';
import { formatUnits } from '@tollgate/protocol';
import type { OrderListRow } from '../data/repo.ts';
import type { PortalContext } from '../http.ts';

export const RoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('developer'), Type.Literal('viewer')]);
const SessionRoleSchema = Type.Union([Type.Literal('operator'), Type.Literal('owner'), Type.Literal('developer'), Type.Literal('viewer')]);

export const SessionSchema = Type.Object({
  role: SessionRoleSchema,
  email: Type.Optional(Type.String()),
  merchant_id: Type.Optional(Type.String({ description: 'the merchant whose data this session sees (the operator picks one)' })),
  merchant_name: Type.Optional(Type.String()),
  csrf_token: Type.String({ description: 'send it as X-CSRF-Token on every POST, PUT and DELETE of this session' }),
  totp_enabled: Type.Boolean({ description: 'the user signs in with a second factor (TOTP)' }),
  totp_enrollment_required: Type.Boolean({ description: 'the merchant requires a second factor and this user has none: only setting one up is allowed' }),
});

export function sessionView(c: Pick<PortalContext, 'role' | 'email' | 'merchantId' | 'merchantName' | 'csrfToken' | 'totpEnabled' | 'totpEnrollment'>) {
  return {
    role: c.role,
    ...(c.email ? { email: c.email } : {}),
    ...(c.merchantId ? { merchant_id: c.merchantId } : {}),
    ...(c.merchantName ? { merchant_name: c.merchantName } : {}),
    csrf_token: c.csrfToken,
    totp_enabled: c.totpEnabled,
    totp_enrollment_required: c.totpEnrollment,
  };
}

export const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$' });
export const Password = Type.String({ minLength: 12, maxLength: 256, description: '12 to 256 characters' });
export const IsoDate = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9:.]+Z)?$', description: 'YYYY-MM-DD (UTC midnight) or an ISO 8601 UTC time' });

export const OrderRowSchema = Type.Object({
  order_id: Type.String(),
  dapp_order_id: Type.String(),
  flow: Type.String(),
  chain_id: Type.Integer(),
  token_symbol: Type.String(),
  from_address: Type.String(),
  amount: Type.String({ description: 'in token units (decimal string)' }),
  amount_wei: Type.String(),
  status: Type.String(),
  tx_hash: Type.Optional(Type.String()),
  created_at: Type.String(),
  rail: Type.Union([Type.Literal('crypto'), Type.Literal('card')], { description: 'card: paid by card through a processor (no chain, token or payer address; chain_id 0, from_address opaque)' }),
  processor: Type.Optional(Type.String({ description: 'card orders: the processor (TEST, STRIPE)' })),
  fiat_currency: Type.Optional(Type.String({ description: 'card orders: the currency charged' })),
  fiat_amount: Type.Optional(Type.String({ description: 'card orders: the amount charged, a decimal string' })),
  payment_reference: Type.Optional(Type.String({ description: "card orders: the processor's payment reference" })),
  callback_status: Type.Optional(Type.String({ description: 'DELEGATE orders: pending | succeeded | failed' })),
});

/** Which rail an order was paid on: card orders have the flow FIAT_<processor> (rails/card/port.ts). */
export const railOf = (flow: string): 'crypto' | 'card' => (flow.startsWith('FIAT_') ? 'card' : 'crypto');

export function orderRowView(r: OrderListRow) {
  return {
    order_id: r.id,
    dapp_order_id: r.dapp_order_id,
    flow: r.flow,
    chain_id: r.chain_id,
    token_symbol: r.token_symbol,
    from_address: r.from_address,
    amount: formatUnits(BigInt(r.amount_wei), r.decimals),
    amount_wei: r.amount_wei,
    status: r.status,
    ...(r.tx_hash ? { tx_hash: r.tx_hash } : {}),
    created_at: r.created_at.toISOString(),
    rail: railOf(r.flow),
    ...(railOf(r.flow) === 'card' ? { processor: r.flow.slice('FIAT_'.length) } : {}),
    ...(r.fiat_currency ? { fiat_currency: r.fiat_currency } : {}),
    ...(r.fiat_amount ? { fiat_amount: r.fiat_amount } : {}),
    ...(r.payment_reference ? { payment_reference: r.payment_reference } : {}),
    ...(r.callback_status ? { callback_status: r.callback_status } : {}),
  };
}

/** The earliest and latest times a date filter means: no order is older or newer. */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * A date query value → Date; 'YYYY-MM-DD' is UTC midnight. undefined when absent or not a real
 * date (2026-02-31 is refused, not rolled over to March). Years before 1970 or after 9999 are
 * clamped there: `from=0000-01-01` means "from the start" (year 0 used to reach SQL, which has no
 * year 0, as a 500), and no order lies outside.
 */
export function parseDay(v: string | undefined): Date | undefined {
  if (!v) return undefined;
  const d = new Date(v.length === 10 ? `${v}T00:00:00Z` : v);
  if (Number.isNaN(d.getTime())) return undefined;
  const [y, m, day] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
  const check = new Date(0);
  check.setUTCFullYear(y, m - 1, day);
  if (check.getUTCFullYear() !== y || check.getUTCMonth() !== m - 1 || check.getUTCDate() !== day) return undefined;
  return new Date(Math.min(Math.max(d.getTime(), EARLIEST), LATEST));
}
