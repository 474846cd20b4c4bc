import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { merchantOf } from '../http.ts';
import { merchantRequiresTotp } from '../mfa-repo.ts';

const SettingsSchema = Type.Object({
  merchant_id: Type.String(),
  name: Type.String(),
  logo_url: Type.Union([Type.String(), Type.Null()]),
  receive_type: Type.String(),
  return_urls: Type.Array(Type.String()),
  wallets: Type.Array(Type.Object({ chain_id: Type.Integer(), token_symbol: Type.String(), address: Type.String() })),
  require_totp: Type.Boolean({ description: 'every portal user of the merchant must sign in with a second factor' }),
});

export const portalGetSettings = defineRoute({
  method: 'GET',
  url: '/portal/api/settings',
  auth: 'portal',
  summary: 'Merchant settings: name, logo, receive mode, return URLs, receiving wallets',
  tags: ['portal'],
  response: { 200: SettingsSchema },
  async handler(req, _reply, deps) {
    const id = merchantOf(req.portal);
    const m = await deps.merchants.getMerchant(id);
    if (!m) throw new AppError('merchant_not_found', 'merchant not found');
    const wallets = await deps.merchants.listWallets(id);
    return {
      merchant_id: m.id,
      name: m.name,
      logo_url: m.logo_url,
      receive_type: m.receive_type,
      return_urls: m.return_urls,
      wallets: wallets.map((w) => ({ chain_id: w.chain_id, token_symbol: w.token_symbol, address: w.address })),
      require_totp: await merchantRequiresTotp(deps.db, id),
    };
  },
});
