import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { merchantOf } from '../http.ts';
import { updateMerchantSettings } from '../repo.ts';

export const portalUpdateSettings = defineRoute({
  method: 'PUT',
  url: '/portal/api/settings',
  auth: 'portal',
  portalRole: 'owner',
  summary: 'Owner: change the merchant name and logo (an https URL; the hosted checkout shows it)',
  tags: ['portal'],
  body: Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      logo_url: Type.Union([Type.String({ maxLength: 2048, pattern: '^https://[^\\s]+$' }), Type.Null()]),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ name: Type.String(), logo_url: Type.Union([Type.String(), Type.Null()]) }) },
  errors: [403],
  async handler(req, _reply, deps) {
    const name = req.body.name.trim();
    if (!name) throw new AppError('invalid_request', 'name must not be blank', 'name');
    if (!(await updateMerchantSettings(deps.db, merchantOf(req.portal), { name, logoUrl: req.body.logo_url }))) throw new AppError('merchant_not_found', 'merchant not found');
    return { name, logo_url: req.body.logo_url };
  },
});
