import { Type } from '@sinclair/typebox';
import type { AppDeps } from '../../deps.ts';
import type { MerchantRow } from '../repo.ts';

export const WalletSchema = Type.Object({
  chain_id: Type.Integer(),
  token_symbol: Type.String(),
  token_contract: Type.String(),
  decimals: Type.Optional(Type.Integer()),
  address: Type.String(),
});

export const FeeBalanceSchema = Type.Object({ available: Type.String(), reserved: Type.String(), captured: Type.String() });

export const PublicMerchantSchema = Type.Object({
  merchant_id: Type.String(),
  name: Type.String(),
  logo_url: Type.Optional(Type.String()),
  receive_type: Type.String(),
  payment_methods: Type.Array(Type.String()),
  wallets: Type.Array(WalletSchema),
});

export const MerchantIdParams = Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 64 }) });

/** wire.md `GET /merchants/{merchant_id}`: the merchant configuration anyone may read. */
export async function publicMerchantView(deps: AppDeps, m: MerchantRow) {
  return {
    merchant_id: m.id,
    name: m.name,
    ...(m.logo_url ? { logo_url: m.logo_url } : {}),
    receive_type: m.receive_type,
    payment_methods: m.card_enabled ? ['crypto', 'fiat'] : ['crypto'],
    wallets: await deps.merchants.listWallets(m.id),
  };
}
