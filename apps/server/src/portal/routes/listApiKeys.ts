import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { merchantOf } from '../http.ts';

export const portalListApiKeys = defineRoute({
  method: 'GET',
  url: '/portal/api/api-keys',
  auth: 'portal',
  summary: 'API keys of the merchant (the key id only: a secret is shown once, when made)',
  tags: ['portal'],
  response: { 200: Type.Object({ api_keys: Type.Array(Type.Object({ api_key: Type.String(), created_at: Type.String(), revoked_at: Type.Union([Type.String(), Type.Null()]) })) }) },
  async handler(req, _reply, deps) {
    return { api_keys: await deps.merchants.listApiKeys(merchantOf(req.portal)) };
  },
});
