import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { merchantOf } from '../http.ts';
import { rotateApiKey } from '../keys.ts';

export const portalRotateApiKey = defineRoute({
  method: 'POST',
  url: '/portal/api/api-keys/:api_key/rotate',
  auth: 'portal',
  portalRole: 'developer',
  summary: 'Rotate an active API key: a new key (secret in this answer only) and the old one revoked, in one transaction',
  tags: ['portal'],
  params: Type.Object({ api_key: Type.String({ minLength: 1, maxLength: 128 }) }),
  response: { 200: Type.Object({ api_key: Type.String(), api_secret: Type.String({ description: 'shown once' }), revoked: Type.String() }) },
  errors: [403],
  async handler(req, reply, deps) {
    const out = await rotateApiKey(deps, merchantOf(req.portal), req.params.api_key);
    if (out.kind === 'not_found') throw new AppError('api_key_not_found', 'no active API key with this value', 'api_key');
    reply.header('cache-control', 'no-store');
    return { api_key: out.apiKey, api_secret: out.apiSecret, revoked: req.params.api_key };
  },
});
