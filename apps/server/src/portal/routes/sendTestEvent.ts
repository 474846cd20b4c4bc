import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { webhookService } from '../../webhooks/service.ts';
import { EventNameSchema } from '../../webhooks/routes/views.ts';
import { merchantOf } from '../http.ts';

export const portalSendTestEvent = defineRoute({
  method: 'POST',
  url: '/portal/api/webhooks/test-event',
  auth: 'portal',
  portalRole: 'developer',
  summary: 'Send a realistic test event (test: true) to the endpoints subscribed to it',
  tags: ['portal'],
  body: Type.Object({ event: EventNameSchema }, { additionalProperties: false }),
  response: { 201: Type.Object({ event_id: Type.String(), deliveries: Type.Integer() }) },
  errors: [403],
  async handler(req, reply, deps) {
    const out = await webhookService(deps).trigger(merchantOf(req.portal), req.body.event);
    if (out.kind === 'merchant_not_found') throw new AppError('merchant_not_found', 'merchant not found');
    reply.status(201);
    return { event_id: out.eventId, deliveries: out.deliveries };
  },
});
