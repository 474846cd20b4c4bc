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

/** One accepted token as GOAT's Go server SDK reads it (`MerchantInfo.supported_tokens`). */
const SupportedTokenSchema = Type.Object({
  chain_id: Type.Integer(),
  symbol: Type.String(),
  token_contract: Type.String(),
  decimals: Type.Integer(),
});

export const PublicMerchantSchema = Type.Object({
  merchant_id: Type.String(),
  name: Type.String(),
  logo_url: Type.Optional(Type.String()),
  logo: Type.Optional(Type.String({ description: "the same URL as logo_url, under the name GOAT Network's server SDKs read (docs/migrating.md)" })),
  receive_type: Type.String(),
  payment_methods: Type.Array(Type.String()),
  wallets: Type.Array(WalletSchema),
  supported_tokens: Type.Array(SupportedTokenSchema, {
    description: "the wallets' tokens, one per chain and token, as GOAT Network's Go server SDK reads them (docs/migrating.md)",
  }),
});

export const MerchantIdParams = Type.Object({ merchant_id: Type.String({ minLength: 1, maxLength: 64 }) });

/** `GET /merchants/{merchant_id}` (docs/migrating.md): the merchant configuration anyone may read. */
export async function publicMerchantView(deps: AppDeps, m: MerchantRow) {
  const wallets = await deps.merchants.listWallets(m.id);
  return {
    merchant_id: m.id,
    name: m.name,
    // `logo` duplicates `logo_url` for GOAT's SDKs (TypeScript and Go read `logo`).
    ...(m.logo_url ? { logo_url: m.logo_url, logo: m.logo_url } : {}),
    receive_type: m.receive_type,
    payment_methods: m.card_enabled ? ['crypto', 'fiat'] : ['crypto'],
    wallets,
    supported_tokens: wallets.map((w) => ({ chain_id: w.chain_id, symbol: w.token_symbol, token_contract: w.token_contract, decimals: w.decimals })),
  };
}
