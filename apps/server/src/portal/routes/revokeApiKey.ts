import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { merchantOf } from '../http.ts';

export const portalRevokeApiKey = defineRoute({
  method: 'POST',
  url: '/portal/api/api-keys/:api_key/revoke',
  auth: 'portal',
  portalRole: 'developer',
  summary: 'Revoke an API key (requests signed with it are refused from now on)',
  tags: ['portal'],
  params: Type.Object({ api_key: Type.String({ minLength: 1, maxLength: 128 }) }),
  response: { 200: Type.Object({ api_key: Type.String(), revoked: Type.Boolean() }) },
  errors: [403],
  async handler(req, _reply, deps) {
    if (!(await deps.merchants.revokeApiKey(merchantOf(req.portal), req.params.api_key))) throw new AppError('api_key_not_found', 'no API key with this value', 'api_key');
    return { api_key: req.params.api_key, revoked: true };
  },
});
