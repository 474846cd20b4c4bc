import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MAX_ACTIVE_API_KEYS } from '../../merchants/service.ts';
import { merchantOf } from '../http.ts';

export const portalCreateApiKey = defineRoute({
  method: 'POST',
  url: '/portal/api/api-keys',
  auth: 'portal',
  portalRole: 'developer',
  summary: `Create an API key; its secret is in this answer only (at most ${MAX_ACTIVE_API_KEYS} active keys)`,
  tags: ['portal'],
  response: { 201: Type.Object({ api_key: Type.String(), api_secret: Type.String({ description: 'shown once' }) }) },
  errors: [403],
  async handler(req, reply, deps) {
    const out = await deps.merchants.createApiKey(merchantOf(req.portal));
    if (out.kind === 'merchant_not_found') throw new AppError('merchant_not_found', 'merchant not found');
    if (out.kind === 'limit') throw new AppError('api_key_limit', `already ${MAX_ACTIVE_API_KEYS} active API keys; revoke or rotate one`);
    reply.status(201).header('cache-control', 'no-store');
    return { api_key: out.apiKey, api_secret: out.apiSecret };
  },
});
