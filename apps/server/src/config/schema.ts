import { Type, type Static } from '@sinclair/typebox';
import type { EvmSigner } from '../signers/port.ts';
import type { SmtpSettings, SolanaDelegateKey, StripeSettings } from './secrets.ts';
import type { TrustProxy } from './trust-proxy.ts';

/**
 * The raw-key signer under its historical name: `new SettlementSigner(key, address)` is how tests
 * and the dev profile hold an executor key. Config holds any {@link EvmSigner} (signers/port.ts).
 */
export { RawKeySigner as SettlementSigner } from '../signers/raw/index.ts';

/**
 * The one schema of Tollgate's configuration: the JSON config file (snake_case, as documented in
 * the README) plus the environment. `load.ts` parses both once at start-up; nothing else reads
 * `process.env`.
 */
const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const Decimal = Type.String({ pattern: '^\\d+(\\.\\d+)?$' });

export const TokenFileSchema = Type.Object(
  {
    symbol: Type.String({ pattern: '^[A-Z0-9]{2,11}$' }),
    /** required unless the chain's preset has a token of this symbol (then: an override) */
    address: Type.Optional(Address),
    decimals: Type.Optional(Type.Integer({ minimum: 0, maximum: 36 })),
    /** the token implements EIP-3009 transferWithAuthorization (DELEGATE orders use flow ERC20_3009) */
    eip3009: Type.Optional(Type.Boolean()),
    /** the token implements EIP-2612 permit (checked at start-up on preset chains) */
    eip2612: Type.Optional(Type.Boolean()),
    /** the token's EIP-712 domain name and version (checked at start-up on preset chains) */
    eip712_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    eip712_version: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
  },
  { additionalProperties: false },
);

const RpcUrl = Type.String({ pattern: '^(https?|wss?)://' });

export const ChainFileSchema = Type.Object(
  {
    /** chain family; absent means `evm` (every entry written before Solana support) */
    kind: Type.Optional(Type.Literal('evm')),
    /** a chain preset (config/presets.ts: 1, 56, 137, 1088, 2345, 42161): its chain id, tokens, depths and explorer; every field here overrides it */
    preset: Type.Optional(Type.Integer({ minimum: 1 })),
    /** required unless `preset` is set (then it must equal it) */
    chain_id: Type.Optional(Type.Integer({ minimum: 1 })),
    name: Type.Optional(Type.String({ minLength: 1 })),
    /** block explorer base URL; the hosted page links `<explorer_url>/tx/<hash>` */
    explorer_url: Type.Optional(Type.String({ pattern: '^https?://[^\\s?#]+$' })),
    /** one RPC URL; or `rpc_urls`, several in order of preference (chain/evm/transport.ts fails over) */
    rpc_url: Type.Optional(RpcUrl),
    rpc_urls: Type.Optional(Type.Array(RpcUrl, { minItems: 1, maxItems: 10 })),
    confirmations: Type.Optional(Type.Integer({ minimum: 0 })),
    finality_confirmations: Type.Optional(Type.Integer({ minimum: 0 })),
    poll_interval_ms: Type.Optional(Type.Integer({ minimum: 50, maximum: 600_000 })),
    /** required unless `preset` is set; with a preset it picks (by symbol) and overrides the preset's tokens */
    tokens: Type.Optional(Type.Array(TokenFileSchema, { minItems: 1 })),
    /** the deployed TollgateSettlement of this chain (DELEGATE mode); needs SETTLEMENT_KEY */
    settlement_contract: Type.Optional(Address),
    /** replacement of the executor's stuck transactions (docs/delegate.md "Stuck transactions") */
    fee_bump: Type.Optional(
      Type.Object(
        {
          /** a transaction unmined this many seconds after it was signed is replaced (default 60) */
          after_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
          /** raise of both fee caps per replacement, in percent (default 15; nodes require at least 10) */
          bump_percent: Type.Optional(Type.Integer({ minimum: 10, maximum: 1_000 })),
          /** the highest maxFeePerGas a replacement may offer, in wei, decimal (default 500 gwei) */
          max_fee_per_gas: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,30}$' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const Base58Key = Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$' });

/** A Solana cluster (docs/solana.md): tokens are SPL mints, depth is a commitment level, not a block count. */
export const SolanaChainFileSchema = Type.Object(
  {
    kind: Type.Literal('solana'),
    /** Tollgate's integer id of the cluster in `chain_id` fields (docs/solana.md lists the defaults) */
    chain_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
    name: Type.Optional(Type.String({ minLength: 1 })),
    explorer_url: Type.Optional(Type.String({ pattern: '^https?://[^\\s?#]+$' })),
    rpc_url: Type.String({ pattern: '^https?://' }),
    /** the cluster's genesis hash: checked against getGenesisHash at start; its first 32 characters form the CAIP-2 id */
    genesis_hash: Base58Key,
    /** commitment at which a payment is PAYMENT_CONFIRMED (default `confirmed`) */
    confirm_commitment: Type.Optional(Type.Union([Type.Literal('confirmed'), Type.Literal('finalized')])),
    /** commitment at which an order is INVOICED (always `finalized`; present so a config states it) */
    finality_commitment: Type.Optional(Type.Literal('finalized')),
    poll_interval_ms: Type.Optional(Type.Integer({ minimum: 50, maximum: 600_000 })),
    tokens: Type.Array(
      Type.Object(
        {
          symbol: Type.String({ pattern: '^[A-Z0-9]{2,11}$' }),
          mint: Base58Key,
          decimals: Type.Integer({ minimum: 0, maximum: 18 }),
          /** the mint's token program: classic SPL Token or Token-2022 */
          program: Type.Union([Type.Literal('spl-token'), Type.Literal('token-2022')]),
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
  },
  { additionalProperties: false },
);
export type SolanaChainFile = Static<typeof SolanaChainFileSchema>;

export const ConfigFileSchema = Type.Object(
  {
    environment: Type.Union([Type.Literal('test'), Type.Literal('production')]),
    public_base_url: Type.Optional(Type.String({ pattern: '^https?://' })),
    order_ttl_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400 })),
    /** as TRUST_PROXY (the variable wins): false, a hop count, or addresses/CIDR ranges (string or array); trust-proxy.ts checks it */
    trust_proxy: Type.Optional(Type.Unknown()),
    fees: Type.Optional(Type.Object({ per_order: Decimal }, { additionalProperties: false })),
    /** EVM entries (ChainFileSchema) and Solana entries (SolanaChainFileSchema, `kind: "solana"`); load.ts checks each against its family's schema */
    chains: Type.Array(Type.Unknown()),
    /** the x402 facilitator (docs/machine-payments.md section 7) */
    x402: Type.Optional(
      Type.Object(
        {
          /**
           * pay-to addresses it also settles for besides this deployment's merchants' wallets and
           * settlement contracts (facilitating for others: the executor pays their gas); `"*"` = any
           */
          facilitate_for: Type.Array(Type.Union([Address, Type.Literal('*')]), { maxItems: 10_000 }),
        },
        { additionalProperties: false },
      ),
    ),
    /** the card processor (docs/card-payments.md); TEST is refused in production */
    card: Type.Optional(
      Type.Object(
        {
          processor: Type.Union([Type.Literal('TEST'), Type.Literal('STRIPE'), Type.Literal('NONE')]),
          /** Stripe API endpoint override (a local stand-in in tests); default api.stripe.com:443 https */
          stripe_api: Type.Optional(
            Type.Object(
              {
                host: Type.String({ minLength: 1 }),
                port: Type.Integer({ minimum: 1, maximum: 65535 }),
                protocol: Type.Union([Type.Literal('http'), Type.Literal('https')]),
              },
              { additionalProperties: false },
            ),
          ),
          /** maximum age of a Stripe webhook signature (default 300) */
          webhook_tolerance_seconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 3600 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ConfigFile = Omit<Static<typeof ConfigFileSchema>, 'chains'> & { chains: unknown[] };

export const EnvSchema = Type.Object({
  PORT: Type.Optional(Type.String({ pattern: '^\\d{1,5}$' })),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  TOLLGATE_CONFIG: Type.Optional(Type.String({ minLength: 1 })),
  ADMIN_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  MASTER_KEY: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$' })),
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  /** which peers may set the client address through X-Forwarded-For (config/trust-proxy.ts) */
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * The DELEGATE executor's signer (it pays settlement gas), one of three (docs/operations.md "Keys"):
   * SETTLEMENT_KEY, the private key itself (hex, 32 bytes);
   */
  SETTLEMENT_KEY: Type.Optional(Type.String({ pattern: '^(0x)?[0-9a-fA-F]{64}$' })),
  /** or SETTLEMENT_KEYSTORE, a Web3 Secret Storage v3 file (geth, `cast wallet`, ethers, `tollgate keys new`), */
  SETTLEMENT_KEYSTORE: Type.Optional(Type.String({ minLength: 1 })),
  /** with its passphrase in SETTLEMENT_KEYSTORE_PASSPHRASE_FILE (a file: preferred) or SETTLEMENT_KEYSTORE_PASSPHRASE; */
  SETTLEMENT_KEYSTORE_PASSPHRASE_FILE: Type.Optional(Type.String({ minLength: 1 })),
  SETTLEMENT_KEYSTORE_PASSPHRASE: Type.Optional(Type.String({ minLength: 1 })),
  /** or SETTLEMENT_SIGNER_URL, a remote JSON-RPC signer (Web3Signer, Clef) holding SETTLEMENT_SIGNER_ADDRESS */
  SETTLEMENT_SIGNER_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  SETTLEMENT_SIGNER_ADDRESS: Type.Optional(Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' })),
  /**
   * SOL_APPROVE_XFER (DELEGATE on Solana): the gateway's delegate key, base58 of the 64-byte
   * keypair (what `solana-keygen` and wallets export) or of its 32-byte private part. Payers approve
   * its public key; it signs (and pays the fees of) the pull transactions.
   */
  SOLANA_DELEGATE_KEY: Type.Optional(Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{43,90}$' })),
  /** or the path of a Solana CLI keypair file (`solana-keygen new -o FILE`: a JSON array of 64 bytes) */
  SOLANA_DELEGATE_KEYPAIR: Type.Optional(Type.String({ minLength: 1 })),
  /** Stripe secret API key (sk_…, rk_…) and webhook endpoint secret (whsec_…) of the card rail */
  STRIPE_SECRET_KEY: Type.Optional(Type.String({ pattern: '^(sk|rk)_[A-Za-z0-9_]+$' })),
  STRIPE_WEBHOOK_SECRET: Type.Optional(Type.String({ pattern: '^whsec_[A-Za-z0-9+/=_]+$' })),
  /**
   * Outgoing mail for self-service portal password resets (smtp:// or smtps://, credentials in the
   * URL); without it only the operator issues reset links (`tollgate portal reset-link`)
   */
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  /** the From address of those mails (required with SMTP_URL) */
  SMTP_FROM: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
  /** as the file's `x402.facilitate_for`, comma-separated (the variable wins) */
  X402_FACILITATE_FOR: Type.Optional(Type.String({ pattern: '^\\s*(\\*|0x[0-9a-fA-F]{40})\\s*(,\\s*(\\*|0x[0-9a-fA-F]{40})\\s*)*$' })),
  LOG_LEVEL: Type.Optional(Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)))),
});
export type Env = Static<typeof EnvSchema>;

export interface TokenConfig {
  symbol: string;
  /** lowercase 0x address */
  address: `0x${string}`;
  decimals: number;
  /** EIP-3009 `transferWithAuthorization` support (false when absent). */
  eip3009?: boolean;
  /** EIP-2612 `permit` support, when stated (a preset or the file); absent: not stated. */
  eip2612?: boolean;
  /** The token's EIP-712 domain, when stated; checked against the chain at start-up on preset chains. */
  eip712?: { name: string; version: string };
  /** Facts a preset leaves uncertain: chain/evm/preset-check.ts reads them from the chain at start-up. */
  readFromChain?: ('eip3009' | 'eip2612' | 'eip712')[];
}

export interface ChainConfig {
  chainId: number;
  name: string;
  /** block explorer base URL without trailing slash (from the file or a known-chain preset) */
  explorerUrl?: string;
  /** The first of `rpcUrls` (every module that predates several URLs reads this one). */
  rpcUrl: string;
  /** Every RPC URL in order of preference (chain/evm/transport.ts fails over between them); absent: `[rpcUrl]`. */
  rpcUrls?: string[];
  /** The preset this chain was built from (config/presets.ts), checked against the chain at start-up. */
  preset?: number;
  confirmations: number;
  finalityConfirmations: number;
  pollIntervalMs: number;
  tokens: TokenConfig[];
  /** The chain's TollgateSettlement (lowercase), when DELEGATE mode is set up on it. */
  settlementContract?: `0x${string}`;
  /** Replacement of the executor's stuck transactions; the executor's defaults when absent. */
  feeBump?: FeeBumpConfig;
}

/** When and how far the executor raises the fees of a transaction that is not mined. */
export interface FeeBumpConfig {
  /** A transaction unmined this long after it was signed is replaced (same nonce, higher fees). */
  afterMs: number;
  /** Raise of maxFeePerGas and maxPriorityFeePerGas per replacement, percent (≥ 10). */
  bumpPercent: number;
  /** No replacement offers more than this maxFeePerGas (wei). */
  maxFeePerGas: bigint;
}

export const DEFAULT_FEE_BUMP: FeeBumpConfig = { afterMs: 60_000, bumpPercent: 15, maxFeePerGas: 500_000_000_000n };

interface SolanaTokenConfig {
  symbol: string;
  /** base58 mint address */
  mint: string;
  decimals: number;
  /** base58 id of the mint's token program (classic SPL Token or Token-2022) */
  programId: string;
}

export interface SolanaChainConfig {
  kind: 'solana';
  chainId: number;
  name: string;
  explorerUrl?: string;
  rpcUrl: string;
  genesisHash: string;
  /** CAIP-2: `solana:` + the first 32 characters of the genesis hash */
  network: string;
  confirmCommitment: 'confirmed' | 'finalized';
  finalityCommitment: 'finalized';
  pollIntervalMs: number;
  tokens: SolanaTokenConfig[];
}

/** The parsed, validated configuration every module receives. */
export interface Config {
  /** `dev`: no TOLLGATE_CONFIG, Tollgate starts its own anvil chain; `file`: a config file. */
  profile: 'dev' | 'file';
  environment: 'test' | 'production';
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  adminToken: string | undefined;
  /** 32-byte AES-256-GCM key for secrets at rest. */
  masterKey: Buffer;
  publicBaseUrl: string;
  logLevel: string;
  /**
   * Which reverse proxies may name the client through X-Forwarded-For: every per-address limit
   * keys on the address that results (http/client-address.ts). Absent: false.
   */
  trustProxy?: TrustProxy;
  /** outgoing mail (portal password resets); absent: only operator-issued reset links */
  smtp?: SmtpSettings;
  orderTtlSeconds: number;
  fees: { perOrderMicros: bigint };
  /** EVM chains (every pre-Solana module reads these) */
  chains: ChainConfig[];
  /** Solana clusters (chain/solana); optional so configs built by hand in tests stay valid */
  solanaChains?: SolanaChainConfig[];
  /** DELEGATE executor (raw key, keystore or remote signer); absent when DELEGATE mode is off. */
  settlement?: EvmSigner;
  /** DELEGATE on Solana (SOLANA_DELEGATE_KEY or SOLANA_DELEGATE_KEYPAIR): the delegate payers approve; absent when off. */
  solanaDelegate?: SolanaDelegateKey;
  /**
   * x402 pay-to addresses (lowercase) the facilitator settles for besides the merchants' wallets
   * and settlement contracts (`*`: any address); absent or empty: merchants only.
   */
  x402FacilitateFor?: readonly string[];
  /**
   * The card processor. Absent: TEST in the test environment, none in production
   * (rails/card/registry.ts). TEST in production is refused at load.
   */
  card?: CardConfig;
}

export type CardConfig = { processor: 'NONE' } | { processor: 'TEST' } | { processor: 'STRIPE'; stripe: StripeSettings };
