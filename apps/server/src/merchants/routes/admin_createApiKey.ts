import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MAX_ACTIVE_API_KEYS } from '../service.ts';
import { MerchantIdParams } from './views.ts';

export const adminCreateApiKey = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants/:merchant_id/api-keys',
  auth: 'admin',
  summary: `Create an API key (secret shown once); at most ${MAX_ACTIVE_API_KEYS} active keys, for rotation`,
  tags: ['admin'],
  params: MerchantIdParams,
  response: { 201: Type.Object({ api_key: Type.String(), api_secret: Type.String() }) },
  async handler(req, reply, deps) {
    const out = await deps.merchants.createApiKey(req.params.merchant_id);
    if (out.kind === 'merchant_not_found') throw new AppError('merchant_not_found', `merchant ${req.params.merchant_id} not found`, 'merchant_id');
    if (out.kind === 'limit') {
      throw new AppError('api_key_limit', `merchant already has ${MAX_ACTIVE_API_KEYS} active API keys; revoke one first`);
    }
    reply.status(201);
    return { api_key: out.apiKey, api_secret: out.apiSecret };
  },
});
