import type { Creds, TestServer } from './server.ts';

/** The first two anvil payer addresses: valid, distinct EVM addresses for tests. */
export const PAYER = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
export const PAYER_2 = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
export const MERCHANT_WALLET = '0xa0ee7a142d267c1f36714e4a8f75612f20a79720';

let seq = 0;
/** A valid order-create body; `overrides` replace fields (undefined removes one). */
export function buildOrderBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    dapp_order_id: `dapp-${Date.now()}-${++seq}`,
    chain_id: 31337,
    token_symbol: 'USDC',
    from_address: PAYER,
    amount_wei: String(1_000_000 + seq),
    ...overrides,
  };
  for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
  return body;
}

/** A merchant with USDC and USDT wallets on every configured chain and a fee balance. */
export async function setupMerchant(server: TestServer, opts: { topUp?: string; name?: string } = {}): Promise<Creds> {
  const creds = await server.createMerchant({ name: opts.name ?? 'Orders Merchant', ...(opts.topUp !== '0' ? { topUp: opts.topUp ?? '10.00' } : {}) });
  for (const chain of server.tg.deps.config.chains) {
    for (const t of chain.tokens) {
      const r = await server.admin('POST', `/admin/v1/merchants/${creds.merchantId}/wallets`, { chain_id: chain.chainId, token_symbol: t.symbol, address: MERCHANT_WALLET });
      if (r.status !== 201) throw new Error(`add wallet: ${r.status} ${r.text}`);
    }
  }
  return creds;
}
