import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { agentMarkdown } from '../manifest.ts';
import { LinkIdParams } from './schemas.ts';
import { AppError } from '../../http/errors.ts';
import { signedManifest } from '../signed-manifest.ts';

export const publicGetAgentMd = defineRoute({
  method: 'GET',
  url: '/quickpay/v1/links/:link_id/agent.md',
  auth: 'public',
  summary: 'Short markdown telling an automated client how to pay the link (text/markdown); the signed facts are in the manifest route of the same link',
  tags: ['quick-pay'],
  params: LinkIdParams,
  rateLimit: 'public_read',
  response: { 200: Type.String({ description: 'text/markdown' }) },
  errors: [429],
  async handler(req, reply, deps) {
    const out = await signedManifest(deps, req.params.link_id);
    if (!out) throw new AppError('link_not_found', 'payment link not found', 'link_id');
    const { manifest, manifestUrl } = out;
    reply.header('cache-control', 'no-store');
    reply.type('text/markdown; charset=utf-8');
    return agentMarkdown(manifest, manifestUrl);
  },
});
