import { randomBytes } from 'node:crypto';
import { formatUnits } from '@tollgate/protocol';
import type { Config, TokenConfig } from '../config/schema.ts';
import { FEE_DECIMALS } from '../config/load.ts';
import type { Database } from '../db/database.ts';
import type { BatchStats } from '../db/batcher.ts';
import { getFeeBalance, openFeeAccount, topUpFees, type FeeBalance } from '../fees/ledger.ts';
import * as repo from './repo.ts';
import { CredentialStore, type ApiKeyEntry, type NonceOutcome } from './credentials.ts';
import { encryptSecret, generateApiCredentials } from './secrets.ts';

/** Two active keys let a merchant rotate: create the new key, deploy it, revoke the old one. */
export const MAX_ACTIVE_API_KEYS = 2;

export interface MerchantCreateInput {
  name: string;
  merchantId?: string | undefined;
  receiveType?: 'DIRECT' | 'DELEGATE' | undefined;
  logoUrl?: string | undefined;
  returnUrls?: string[] | undefined;
}

export type CreateMerchantOutcome = { kind: 'created'; merchantId: string; apiKey: string; apiSecret: string } | { kind: 'duplicate' };

export type AddWalletOutcome = { kind: 'added'; wallet: WalletView } | { kind: 'merchant_not_found' } | { kind: 'chain_not_supported' } | { kind: 'token_not_supported' };

export interface WalletView {
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  decimals: number;
  address: string;
}

export interface FeeBalanceView {
  available: string;
  reserved: string;
  captured: string;
}

export function feeBalanceView(b: FeeBalance): FeeBalanceView {
  const f = (v: bigint) => formatUnits(v, FEE_DECIMALS, 2);
  return { available: f(b.available), reserved: f(b.reserved), captured: f(b.captured) };
}

/**
 * Merchants, their credentials, receiving wallets and fee balance. Returns typed outcomes; the
 * admin routes map them to HTTP.
 */
export class MerchantService {
  private readonly credentials: CredentialStore;
  private readonly db: Database;
  private readonly config: Config;

  constructor(db: Database, config: Config) {
    this.db = db;
    this.config = config;
    this.credentials = new CredentialStore(db, config.masterKey);
  }

  /** The configured token for (chain, symbol), or why there is none. */
  resolveToken(chainId: number, symbol: string): TokenConfig | 'chain_not_supported' | 'token_not_supported' {
    const chain = this.config.chains.find((c) => c.chainId === chainId);
    if (!chain) {
      // A Solana cluster's token: its mint in the place of the contract (base58, not 0x).
      const sol = this.config.solanaChains?.find((c) => c.chainId === chainId);
      if (!sol) return 'chain_not_supported';
      const t = sol.tokens.find((x) => x.symbol === symbol);
      return t ? { symbol: t.symbol, address: t.mint as `0x${string}`, decimals: t.decimals } : 'token_not_supported';
    }
    return chain.tokens.find((t) => t.symbol === symbol) ?? 'token_not_supported';
  }

  async createMerchant(input: MerchantCreateInput): Promise<CreateMerchantOutcome> {
    const merchantId = input.merchantId ?? `mch_${randomBytes(9).toString('base64url').replace(/[-_]/g, 'x')}`;
    const creds = generateApiCredentials(this.config.environment);
    return this.db.transaction(async (tx) => {
      const inserted = await repo.insertMerchant(tx, {
        id: merchantId,
        name: input.name,
        receiveType: input.receiveType ?? 'DIRECT',
        logoUrl: input.logoUrl,
        returnUrls: input.returnUrls ?? [],
      });
      if (!inserted) return { kind: 'duplicate' } as const;
      await openFeeAccount(tx, merchantId);
      await repo.insertApiKey(tx, { apiKey: creds.apiKey, merchantId, ciphertext: encryptSecret(this.config.masterKey, creds.apiSecret, creds.apiKey) });
      return { kind: 'created', merchantId, ...creds } as const;
    });
  }

  async getMerchant(id: string): Promise<repo.MerchantRow | undefined> {
    return repo.getMerchant(this.db, id);
  }

  /** Wallets joined with the configured token metadata; wallets of tokens no longer configured are hidden. */
  async listWallets(merchantId: string): Promise<WalletView[]> {
    const rows = await repo.listWallets(this.db, merchantId);
    const out: WalletView[] = [];
    for (const w of rows) {
      const t = this.resolveToken(w.chain_id, w.token_symbol);
      if (typeof t === 'string') continue;
      out.push({ chain_id: w.chain_id, token_symbol: w.token_symbol, token_contract: t.address, decimals: t.decimals, address: w.address });
    }
    return out;
  }

  /** Enables or disables the card rail (fiat checkout sessions); undefined for an unknown merchant. */
  setCardEnabled(merchantId: string, enabled: boolean): Promise<repo.MerchantRow | undefined> {
    return repo.setCardEnabled(this.db, merchantId, enabled);
  }

  /** Replaces the checkout return-URL allowlist (validated by the route); undefined for an unknown merchant. */
  setReturnUrls(merchantId: string, urls: string[]): Promise<repo.MerchantRow | undefined> {
    return repo.setReturnUrls(this.db, merchantId, urls);
  }

  /**
   * Sets the under-payment tolerance in basis points (0–1000, checked by the route and the
   * database). Applies to transfers matched from now on: attribution reads it at match time.
   */
  setUnderpayTolerance(merchantId: string, bps: number): Promise<repo.MerchantRow | undefined> {
    return repo.setUnderpayTolerance(this.db, merchantId, bps);
  }

  async getFeeBalance(merchantId: string): Promise<FeeBalance | undefined> {
    return getFeeBalance(this.db, merchantId);
  }

  async listApiKeys(merchantId: string): Promise<{ api_key: string; created_at: string; revoked_at: string | null }[]> {
    const rows = await repo.listApiKeys(this.db, merchantId);
    return rows.map((k) => ({ api_key: k.api_key, created_at: k.created_at.toISOString(), revoked_at: k.revoked_at?.toISOString() ?? null }));
  }

  /**
   * `address` in its chain family's stored form (the caller checked and normalized it: EVM
   * lowercase, Solana base58 as given), so merchants/ knows no family's rule.
   */
  async addWallet(merchantId: string, w: { chainId: number; tokenSymbol: string; address: string }): Promise<AddWalletOutcome> {
    const token = this.resolveToken(w.chainId, w.tokenSymbol);
    if (typeof token === 'string') return { kind: token };
    const address = w.address;
    return this.db.transaction(async (tx) => {
      if (!(await repo.lockMerchant(tx, merchantId))) return { kind: 'merchant_not_found' } as const;
      await repo.upsertWallet(tx, { merchant_id: merchantId, chain_id: w.chainId, token_symbol: w.tokenSymbol, address });
      return {
        kind: 'added',
        wallet: { chain_id: w.chainId, token_symbol: w.tokenSymbol, token_contract: token.address, decimals: token.decimals, address },
      } as const;
    });
  }

  async topUp(merchantId: string, amountMicros: bigint): Promise<FeeBalance | undefined> {
    return this.db.transaction(async (tx) => {
      if (!(await topUpFees(tx, merchantId, amountMicros))) return undefined;
      return getFeeBalance(tx, merchantId);
    });
  }

  async createApiKey(merchantId: string): Promise<{ kind: 'created'; apiKey: string; apiSecret: string } | { kind: 'merchant_not_found' } | { kind: 'limit' }> {
    const creds = generateApiCredentials(this.config.environment);
    return this.db.transaction(async (tx) => {
      if (!(await repo.lockMerchant(tx, merchantId))) return { kind: 'merchant_not_found' } as const;
      if ((await repo.countActiveKeys(tx, merchantId)) >= MAX_ACTIVE_API_KEYS) return { kind: 'limit' } as const;
      await repo.insertApiKey(tx, { apiKey: creds.apiKey, merchantId, ciphertext: encryptSecret(this.config.masterKey, creds.apiSecret, creds.apiKey) });
      return { kind: 'created', ...creds } as const;
    });
  }

  async revokeApiKey(merchantId: string, apiKey: string): Promise<boolean> {
    const ok = await repo.revokeApiKey(this.db, merchantId, apiKey);
    this.credentials.forget(apiKey);
    return ok;
  }

  /** For request authentication: the key's merchant and decrypted secret (cached; see credentials.ts). */
  findApiKey(apiKey: string): Promise<ApiKeyEntry | undefined> {
    return this.credentials.findApiKey(apiKey);
  }

  /** Records a verified request's nonce; 'replay' when used before, 'revoked' when the key was revoked. */
  consumeNonce(apiKey: string, nonce: string): Promise<NonceOutcome> {
    return this.credentials.consumeNonce(apiKey, nonce);
  }

  /** Group-commit counters of nonce consumption (metrics). */
  nonceBatchStats(): BatchStats {
    return this.credentials.nonceBatchStats();
  }
}
