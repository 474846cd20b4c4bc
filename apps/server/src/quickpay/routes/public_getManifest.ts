import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MANIFEST_TYP, ManifestSchema } from '../manifest.ts';
import { signedManifest } from '../signed-manifest.ts';
import { LinkIdParams } from './schemas.ts';

export const publicGetManifest = defineRoute({
  method: 'GET',
  url: '/quickpay/v1/links/:link_id/manifest.json',
  auth: 'public',
  summary: 'Signed agent manifest of a link: routes, amounts, chains and tokens; `signature` is a compact JWS (EdDSA) verifiable with the JWKS route of machine payments',
  tags: ['quick-pay'],
  params: LinkIdParams,
  rateLimit: 'public_read',
  response: {
    200: Type.Object({
      manifest: { ...ManifestSchema, description: 'the JWS payload, decoded (informative: trust the signed payload)' },
      signature: Type.String({ description: `compact JWS, header { alg: EdDSA, typ: ${MANIFEST_TYP}, kid }; its payload is authoritative` }),
    }),
  },
  errors: [429],
  async handler(req, reply, deps) {
    const out = await signedManifest(deps, req.params.link_id);
    if (!out) throw new AppError('link_not_found', 'payment link not found', 'link_id');
    const { manifest, signature } = out;
    reply.header('cache-control', 'no-store');
    return { manifest, signature };
  },
});
