import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';

export const adminRevokeApiKey = defineRoute({
  method: 'DELETE',
  url: '/admin/v1/merchants/:merchant_id/api-keys/:api_key',
  auth: 'admin',
  summary: 'Revoke an API key (idempotent); requests signed with it are refused from now on',
  tags: ['admin'],
  params: Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 64 }), api_key: Type.String({ minLength: 1, maxLength: 200 }) }),
  response: { 200: Type.Object({ api_key: Type.String(), revoked: Type.Literal(true) }) },
  async handler(req, _reply, deps) {
    const ok = await deps.merchants.revokeApiKey(req.params.merchant_id, req.params.api_key);
    if (!ok) throw new AppError('api_key_not_found', 'no such API key for this merchant', 'api_key');
    return { api_key: req.params.api_key, revoked: true as const };
  },
});
