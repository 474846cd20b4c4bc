import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MAX_BULK_REDELIVERIES, webhookService } from '../service.ts';
import { MerchantIdParams } from './views.ts';
import { parseRfc3339 } from '../../http/time.ts';

export const adminRedeliverSince = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/webhook-deliveries/redeliver',
  auth: 'admin',
  summary: 'Redeliver every failed (retry now) and/or dead (new delivery) delivery created since a time',
  tags: ['webhooks'],
  params: MerchantIdParams,
  body: Type.Object(
    {
      since: Type.String({ minLength: 10, maxLength: 40, description: 'RFC 3339 time; deliveries created at or after it' }),
      status: Type.Optional(Type.Union([Type.Literal('dead'), Type.Literal('failed')], { description: 'default: both' })),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      requeued: Type.Integer({ description: 'failed deliveries whose next attempt moved to now' }),
      redelivered: Type.Integer({ description: 'dead deliveries queued again as new deliveries' }),
      more: Type.Boolean({ description: `true when more than ${MAX_BULK_REDELIVERIES} dead deliveries matched: call again` }),
    }),
  },
  async handler(req, _reply, deps) {
    const since = parseRfc3339(req.body.since);
    if (!since) throw new AppError('invalid_request', 'since must be an RFC 3339 time from 1970 to 9999, e.g. 2025-01-31T12:00:00Z', 'since');
    const out = await webhookService(deps).redeliverSince(req.params.merchant_id, since, req.body.status);
    if (!out) throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    return out;
  },
});
