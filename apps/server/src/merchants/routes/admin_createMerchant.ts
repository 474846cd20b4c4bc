import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { MerchantIdString } from '../../http/schemas.ts';

export const adminCreateMerchant = defineRoute({
  method: 'POST',
  url: '/admin/v1/merchants',
  auth: 'admin',
  summary: 'Create a merchant; its first API key and secret are shown once',
  tags: ['admin'],
  body: Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      merchant_id: Type.Optional(MerchantIdString),
      receive_type: Type.Optional(Type.Union([Type.Literal('DIRECT'), Type.Literal('DELEGATE')])),
      logo_url: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 2000 })),
      return_urls: Type.Optional(Type.Array(Type.String({ pattern: '^https?://', maxLength: 2000 }), { maxItems: 20 })),
    },
    { additionalProperties: false },
  ),
  response: {
    201: Type.Object({ merchant_id: Type.String(), name: Type.String(), receive_type: Type.String(), api_key: Type.String(), api_secret: Type.String() }),
  },
  errors: [409],
  async handler(req, reply, deps) {
    const b = req.body;
    const out = await deps.merchants.createMerchant({
      name: b.name.trim(),
      merchantId: b.merchant_id,
      receiveType: b.receive_type,
      logoUrl: b.logo_url,
      returnUrls: b.return_urls,
    });
    if (out.kind === 'duplicate') throw new AppError('merchant_already_exists', `merchant ${b.merchant_id} already exists`, 'merchant_id');
    reply.status(201);
    return { merchant_id: out.merchantId, name: b.name.trim(), receive_type: b.receive_type ?? 'DIRECT', api_key: out.apiKey, api_secret: out.apiSecret };
  },
});
