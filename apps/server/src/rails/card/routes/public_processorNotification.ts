import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../../http/route.ts';
import { AppError } from '../../../http/errors.ts';
import { cardsOf } from '../index.ts';

/**
 * The card processor's notifications (Stripe webhook endpoint: `POST /card/v1/notifications/stripe`).
 * The body is taken raw: the processor's signature covers the exact bytes (Stripe:
 * `stripe.webhooks.constructEvent` with the configured tolerance). A bad, stale or missing
 * signature → 400 invalid_processor_signature and nothing is applied; another deployment's
 * processor → 404. 200 only once the events are durably applied (the processor retries otherwise).
 */
export const publicProcessorNotification = defineRoute({
  method: 'POST',
  url: '/card/v1/notifications/:processor',
  auth: 'public',
  summary: 'Card processor notifications (webhook endpoint of the configured processor)',
  tags: ['card'],
  params: Type.Object({ processor: Type.String({ minLength: 1, maxLength: 20, description: 'stripe, or test for the TEST processor' }) }),
  body: Type.String({ description: "the processor's JSON event, verified over its raw bytes" }),
  rawBody: true,
  response: { 200: Type.Object({ received: Type.Integer(), outcomes: Type.Array(Type.String()) }) },
  async handler(req, _reply, deps) {
    const out = await cardsOf(deps).handleNotification(req.params.processor, req.body, req.raw.headers);
    if (out.kind === 'not_found') throw new AppError('not_found', 'no card processor with this name is configured here', 'processor');
    if (out.kind === 'invalid') throw new AppError('invalid_processor_signature', `the notification was refused: ${out.reason}`);
    return { received: out.outcomes.length, outcomes: out.outcomes };
  },
});
