import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { listCheckoutSessions } from '../data/repo.ts';
import { merchantOf } from '../http.ts';

export const portalListCheckoutSessions = defineRoute({
  method: 'GET',
  url: '/portal/api/checkout-sessions',
  auth: 'portal',
  summary: 'Hosted checkout sessions of the merchant, newest first (page with `before`, a checkout id)',
  tags: ['portal'],
  querystring: Type.Object({ before: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }, { additionalProperties: false }),
  response: {
    200: Type.Object({
      sessions: Type.Array(
        Type.Object({
          checkout_id: Type.String(),
          status: Type.String(),
          price: Type.Optional(Type.String()),
          fiat: Type.Optional(Type.String({ description: 'amount and currency of a card-rail session' })),
          client_reference_id: Type.Optional(Type.String()),
          order_id: Type.Optional(Type.String()),
          success_url: Type.Optional(Type.String()),
          cancel_url: Type.Optional(Type.String()),
          expires_at: Type.String(),
          created_at: Type.String(),
        }),
      ),
      next: Type.Union([Type.String(), Type.Null()]),
    }),
  },
  async handler(req, _reply, deps) {
    const rows = await listCheckoutSessions(deps.db, merchantOf(req.portal), req.query.before, 51);
    const page = rows.slice(0, 50);
    const opt = (k: string, v: string | null) => (v ? { [k]: v } : {});
    return {
      sessions: page.map((s) => ({
        checkout_id: s.id,
        status: s.status,
        ...opt('price', s.price),
        ...opt('fiat', s.fiat_amount && `${s.fiat_amount} ${s.fiat_currency}`),
        ...opt('client_reference_id', s.client_reference_id),
        ...opt('order_id', s.order_id),
        ...opt('success_url', s.success_url),
        ...opt('cancel_url', s.cancel_url),
        expires_at: s.expires_at.toISOString(),
        created_at: s.created_at.toISOString(),
      })),
      next: rows.length > 50 ? page.at(-1)!.id : null,
    };
  },
});
