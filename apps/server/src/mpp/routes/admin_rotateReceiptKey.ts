import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';

export const adminRotateReceiptKey = defineRoute({
  method: 'POST',
  url: '/admin/v1/mpp/receipt-keys',
  auth: 'admin',
  summary: 'Rotate the receipt signing key (the old key stays in the JWKS)',
  tags: ['admin'],
  response: { 201: Type.Object({ kid: Type.String() }) },
  async handler(_req, reply, deps) {
    const kid = await deps.mpp.receipts.rotate();
    reply.status(201);
    return { kid };
  },
});
