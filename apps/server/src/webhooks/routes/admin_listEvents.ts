import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { webhookService } from '../service.ts';
import { EventSchema, IntString, MerchantIdParams, eventView } from './views.ts';

const MAX_WAIT_SECONDS = 30;
const MAX_LIMIT = 500;

export const adminListEvents = defineRoute({
  method: 'GET',
  url: '/admin/v1/merchants/:merchant_id/events',
  auth: 'admin',
  summary: "The merchant's events in creation order after a cursor, long-polling up to `wait` seconds (feeds `tollgate listen`)",
  tags: ['webhooks'],
  params: MerchantIdParams,
  querystring: Type.Object(
    {
      after: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'an event id (evt_…) from a previous answer, or `now` for only new events' })),
      wait: Type.Optional(IntString(MAX_WAIT_SECONDS)),
      limit: Type.Optional(IntString(MAX_LIMIT)),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ events: Type.Array(EventSchema), next_after: Type.Union([Type.String(), Type.Null()], { description: 'pass as `after` next time' }) }) },
  async handler(req, _reply, deps) {
    const q = req.query;
    const raw = req.raw;
    const out = await webhookService(deps).listEvents(req.params.merchant_id, {
      after: q.after,
      limit: Math.min(Math.max(Number(q.limit ?? 100), 1), MAX_LIMIT),
      waitSeconds: Math.min(Number(q.wait ?? 0), MAX_WAIT_SECONDS),
      // Stop waiting when the client went away or the server is shutting down (close() must not
      // wait out a 25 s poll).
      cancelled: () => raw.raw.socket.destroyed || !raw.server.server.listening,
    });
    if (out.kind === 'merchant_not_found') throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    if (out.kind === 'cursor_not_found') throw new AppError('invalid_request', `no event ${q.after} for this merchant`, 'after');
    return { events: out.events.map(eventView), next_after: out.nextAfter };
  },
});
