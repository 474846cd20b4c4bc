import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { MerchantService } from '../merchants/service.ts';
import { getMerchant, listWallets } from '../merchants/repo.ts';
import { isRouteCanonical } from './canonical.ts';
import * as repo from './repo.ts';

/** A route price as the merchant API shows it (docs/machine-payments.md, section 1). */
export interface RoutePriceView {
  route_canonical: string;
  amount_wei: string;
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  recipient: string;
  route_pricing_version: number;
  updated_at: string;
}

function routePriceView(r: repo.RouteRow): RoutePriceView {
  return {
    route_canonical: r.route_canonical,
    amount_wei: r.amount_wei,
    chain_id: r.chain_id,
    token_symbol: r.token_symbol,
    token_contract: r.token_contract,
    recipient: r.recipient,
    route_pricing_version: r.version,
    updated_at: r.updated_at.toISOString(),
  };
}

export type SetPriceOutcome = { kind: 'set'; route: RoutePriceView } | { kind: 'invalid_route' } | { kind: 'invalid_amount' } | { kind: 'merchant_not_found' } | { kind: 'chain_not_supported' } | { kind: 'token_not_supported' } | { kind: 'wallet_not_found' };

const MAX_UINT256 = (1n << 256n) - 1n;

/**
 * Prices of machine-paid routes. The recipient is the merchant's receiving wallet for the chosen
 * (chain, token), resolved when the price is set: a payer is told an address the merchant already
 * registered, never one typed into a pricing call.
 */
export class RoutePricing {
  private readonly db: Database;
  private readonly config: Config;
  private readonly merchants: MerchantService;
  constructor(db: Database, config: Config, merchants: MerchantService) {
    this.db = db;
    this.config = config;
    this.merchants = merchants;
  }

  async setPrice(merchantId: string, p: { routeCanonical: string; amountWei: string; chainId: number; tokenSymbol: string }): Promise<SetPriceOutcome> {
    if (!isRouteCanonical(p.routeCanonical)) return { kind: 'invalid_route' };
    if (!/^[1-9][0-9]{0,77}$/.test(p.amountWei) || BigInt(p.amountWei) > MAX_UINT256) return { kind: 'invalid_amount' };
    const token = this.merchants.resolveToken(p.chainId, p.tokenSymbol);
    if (typeof token === 'string') return { kind: token };
    return this.db.transaction(async (tx) => {
      const wallets = await listWallets(tx, merchantId);
      const wallet = wallets.find((w) => w.chain_id === p.chainId && w.token_symbol === p.tokenSymbol);
      if (!wallet) {
        return (await getMerchant(tx, merchantId)) ? { kind: 'wallet_not_found' as const } : { kind: 'merchant_not_found' as const };
      }
      const row = await repo.upsertRoute(tx, {
        merchant_id: merchantId,
        route_canonical: p.routeCanonical,
        chain_id: p.chainId,
        token_symbol: p.tokenSymbol,
        token_contract: token.address.toLowerCase(),
        amount_wei: p.amountWei,
        recipient: wallet.address.toLowerCase(),
      });
      return { kind: 'set' as const, route: routePriceView(row) };
    });
  }

  async listPrices(merchantId: string): Promise<RoutePriceView[]> {
    return (await repo.listRoutes(this.db, merchantId)).map(routePriceView);
  }

  getRoute(merchantId: string, routeCanonical: string): Promise<repo.RouteRow | undefined> {
    return repo.getRoute(this.db, merchantId, routeCanonical);
  }

  /** Whether the configuration still offers the route's chain and token (a removed token is not payable). */
  isPayable(r: repo.RouteRow): boolean {
    const t = this.merchants.resolveToken(r.chain_id, r.token_symbol);
    return typeof t !== 'string' && t.address.toLowerCase() === r.token_contract && this.config.chains.some((c) => c.chainId === r.chain_id);
  }
}
