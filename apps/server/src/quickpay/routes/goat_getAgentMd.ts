import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { buildGoatManifest, goatAgentMarkdown } from '../goat/manifest.ts';
import { GoatIdParams } from '../goat/schemas.ts';
import { resolveGoatTarget } from '../goat/target.ts';

export const goatGetAgentMd = defineRoute({
  method: 'GET',
  url: '/quickpay/:merchant_id/agent.md',
  auth: 'public',
  summary: 'GOAT quick-pay agent document of a merchant or a payment link (text/markdown): how to pay, with GOAT’s CLI or over HTTP',
  tags: ['quick-pay'],
  params: GoatIdParams,
  rateLimit: 'public_read',
  response: { 200: Type.String({ description: 'text/markdown' }) },
  errors: [429],
  async handler(req, reply, deps) {
    const t = await resolveGoatTarget(deps, req.params.merchant_id);
    if (!t) throw new AppError('merchant_not_found', 'no quick-pay merchant or payment link with this id', 'merchant_id');
    reply.header('cache-control', 'no-store');
    reply.type('text/markdown; charset=utf-8');
    return goatAgentMarkdown(buildGoatManifest(t, deps.config.publicBaseUrl), deps.config.publicBaseUrl);
  },
});
