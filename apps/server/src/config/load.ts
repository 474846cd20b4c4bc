import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import type { Static, TSchema } from '@sinclair/typebox';
import { parseDecimal } from '@tollgate/protocol';
import type { EvmSigner } from '../signers/port.ts';
import { RawKeySigner } from '../signers/raw/index.ts';
import { KeystoreError, passphraseFromFile, readKeystoreSigner } from '../signers/keystore/index.ts';
import { RemoteSigner, RemoteSignerError } from '../signers/remote/index.ts';
import { CHAIN_PRESETS, KNOWN_CHAINS, PRESET_IDS, type PresetToken } from './presets.ts';
import {
  ChainFileSchema,
  ConfigFileSchema,
  type TokenFileSchema,
  type TokenConfig,
  DEFAULT_FEE_BUMP,
  EnvSchema,
  SolanaChainFileSchema,
  type ChainConfig,
  type Config,
  type ConfigFile,
  type Env,
  type CardConfig,
  type SolanaChainConfig,
  type SolanaChainFile,
} from './schema.ts';
import { SmtpSettings, StripeSettings } from './secrets.ts';
import { solanaChainFromFile, solanaDelegateKey, solanaDelegateKeypairFile } from './solana.ts';
import { parseTrustProxy } from './trust-proxy.ts';

/** Fee balances are kept in micro-units of the fee currency (USD): 6 decimals, like USDC. */
export const FEE_DECIMALS = 6;

import { ConfigError } from './errors.ts';
export { ConfigError };

function check<T>(schema: TSchema, value: unknown, prefix: string): T {
  const first = Value.Errors(schema, value).First();
  if (first) {
    const path = first.path.replace(/^\//, '').replaceAll('/', '.');
    // A root that is not an object has an empty path: name the file's variable instead of nothing.
    throw new ConfigError(prefix + (path ? (prefix ? '.' : '') + path : '') || 'TOLLGATE_CONFIG', first.message);
  }
  return value as T;
}

/** Picks the variables Tollgate knows; everything else in the environment is ignored. */
function pickEnv(env: Record<string, string | undefined>): Env {
  const known = Object.keys(EnvSchema.properties);
  const picked: Record<string, string> = {};
  for (const k of known) {
    const v = env[k];
    if (v !== undefined && v !== '') picked[k] = v;
  }
  const first = Value.Errors(EnvSchema, picked).First();
  if (first) throw new ConfigError(first.path.replace(/^\//, ''), first.message);
  return picked as Env;
}

/** Reads a secret file from the data directory, creating it (mode 0600) on first use. */
function devSecret(dataDir: string, name: string, make: () => string): string {
  mkdirSync(dataDir, { recursive: true });
  const p = join(dataDir, name);
  if (!existsSync(p)) writeFileSync(p, make() + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(p, 0o600);
  return readFileSync(p, 'utf8').trim();
}

function chainFromFile(c: Static<typeof ChainFileSchema>, i: number): ChainConfig {
  let chainId = c.chain_id;
  let presetTokens: readonly PresetToken[] | undefined;
  if (c.preset !== undefined) {
    presetTokens = CHAIN_PRESETS[c.preset]?.tokens;
    if (!presetTokens) throw new ConfigError(`chains.${i}.preset`, `no preset for chain ${c.preset} (presets: ${PRESET_IDS.join(', ')})`);
    if (chainId !== undefined && chainId !== c.preset) throw new ConfigError(`chains.${i}.chain_id`, `must equal preset ${c.preset} (or be left out)`);
    chainId = c.preset;
  }
  if (chainId === undefined) throw new ConfigError(`chains.${i}.chain_id`, 'required unless preset is set');
  if (c.rpc_url !== undefined && c.rpc_urls !== undefined) throw new ConfigError(`chains.${i}.rpc_urls`, 'give rpc_url or rpc_urls, not both');
  const rpcUrls = c.rpc_urls ?? (c.rpc_url !== undefined ? [c.rpc_url] : undefined);
  if (!rpcUrls) throw new ConfigError(`chains.${i}.rpc_url`, 'required (or rpc_urls)');
  if (new Set(rpcUrls).size !== rpcUrls.length) throw new ConfigError(`chains.${i}.rpc_urls`, 'duplicate URL');
  const preset = CHAIN_PRESETS[chainId];
  const known = KNOWN_CHAINS[chainId];
  const explorerUrl = (c.explorer_url ?? known?.explorer_url)?.replace(/\/+$/, '');
  const confirmations = c.confirmations ?? preset?.confirmations;
  const finality = c.finality_confirmations ?? preset?.finality_confirmations;
  if (confirmations === undefined) throw new ConfigError(`chains.${i}.confirmations`, 'required for a chain without a preset');
  if (finality === undefined) throw new ConfigError(`chains.${i}.finality_confirmations`, 'required for a chain without a preset');
  if (finality < confirmations) {
    throw new ConfigError(`chains.${i}.finality_confirmations`, `must be >= confirmations (${confirmations})`);
  }
  const fileTokens = c.tokens ?? presetTokens?.map((t) => ({ symbol: t.symbol }));
  if (!fileTokens) throw new ConfigError(`chains.${i}.tokens`, 'required unless preset is set');
  const symbols = new Set<string>();
  const tokens = fileTokens.map((t, j) => {
    if (symbols.has(t.symbol)) throw new ConfigError(`chains.${i}.tokens.${j}.symbol`, `duplicate symbol ${t.symbol}`);
    symbols.add(t.symbol);
    return tokenFromFile(
      t,
      presetTokens?.find((p) => p.symbol === t.symbol),
      `chains.${i}.tokens.${j}`,
    );
  });
  return {
    chainId,
    name: c.name ?? preset?.name ?? known?.name ?? `Chain ${chainId}`,
    ...(explorerUrl ? { explorerUrl } : {}),
    rpcUrl: rpcUrls[0]!,
    ...(rpcUrls.length > 1 ? { rpcUrls } : {}),
    ...(c.preset !== undefined ? { preset: c.preset } : {}),
    confirmations,
    finalityConfirmations: finality,
    pollIntervalMs: c.poll_interval_ms ?? preset?.poll_interval_ms ?? 2000,
    tokens,
    ...(c.settlement_contract ? { settlementContract: c.settlement_contract.toLowerCase() as `0x${string}` } : {}),
    // Absent: the executor uses DEFAULT_FEE_BUMP.
    ...(c.fee_bump
      ? {
          feeBump: {
            afterMs: (c.fee_bump.after_seconds ?? DEFAULT_FEE_BUMP.afterMs / 1000) * 1000,
            bumpPercent: c.fee_bump.bump_percent ?? DEFAULT_FEE_BUMP.bumpPercent,
            maxFeePerGas: c.fee_bump.max_fee_per_gas !== undefined ? BigInt(c.fee_bump.max_fee_per_gas) : DEFAULT_FEE_BUMP.maxFeePerGas,
          },
        }
      : {}),
  };
}

/**
 * One token: the file's fields, each falling back to the preset token of the same symbol. A field
 * the preset leaves uncertain ('read') and the file does not state is read from the chain at start-up.
 */
function tokenFromFile(t: Static<typeof TokenFileSchema>, p: PresetToken | undefined, at: string): TokenConfig {
  const address = t.address ?? p?.address;
  const decimals = t.decimals ?? p?.decimals;
  if (address === undefined) throw new ConfigError(`${at}.address`, p ? 'required' : `required (the preset has no token ${t.symbol})`);
  if (decimals === undefined) throw new ConfigError(`${at}.decimals`, 'required');
  if ((t.eip712_name === undefined) !== (t.eip712_version === undefined)) throw new ConfigError(`${at}.eip712_version`, 'eip712_name and eip712_version go together');
  const read: NonNullable<TokenConfig['readFromChain']> = [];
  const eip3009 = t.eip3009 ?? (p?.eip3009 === 'read' ? (read.push('eip3009'), undefined) : p?.eip3009);
  const eip2612 = t.eip2612 ?? (p?.eip2612 === 'read' ? (read.push('eip2612'), undefined) : p?.eip2612);
  const eip712 = t.eip712_name !== undefined ? { name: t.eip712_name, version: t.eip712_version! } : p?.eip712 === 'read' ? (read.push('eip712'), undefined) : typeof p?.eip712 === 'object' ? p.eip712 : undefined;
  return {
    symbol: t.symbol,
    address: address.toLowerCase() as `0x${string}`,
    decimals,
    ...(eip3009 ? { eip3009: true } : {}),
    ...(eip2612 !== undefined ? { eip2612 } : {}),
    ...(eip712 ? { eip712 } : {}),
    ...(read.length > 0 ? { readFromChain: read } : {}),
  };
}

/**
 * Parses the environment and (when `TOLLGATE_CONFIG` is set) the JSON config file into one
 * validated {@link Config}. Called once by the composition root; throws {@link ConfigError}.
 *
 * @example const config = loadConfig(process.env);
 */
export function loadConfig(rawEnv: Record<string, string | undefined>, cwd = process.cwd()): Config {
  const env = pickEnv(rawEnv);
  const dataDir = resolve(cwd, env.DATA_DIR ?? '.tollgate');
  let file: ConfigFile | undefined;
  if (env.TOLLGATE_CONFIG) {
    const path = resolve(cwd, env.TOLLGATE_CONFIG);
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path, 'utf8'));
    } catch (err) {
      throw new ConfigError('TOLLGATE_CONFIG', `cannot read ${path}: ${(err as Error).message}`);
    }
    file = check<ConfigFile>(ConfigFileSchema, raw, '');
  }
  const profile = file ? 'file' : 'dev';
  const port = env.PORT ? Number(env.PORT) : 8402;
  if (port > 65535) throw new ConfigError('PORT', 'must be <= 65535');
  const host = env.HOST ?? '127.0.0.1';
  const trustProxy = env.TRUST_PROXY !== undefined ? parseTrustProxy(env.TRUST_PROXY, 'TRUST_PROXY') : parseTrustProxy(file?.trust_proxy, 'trust_proxy');

  let masterKeyHex = env.MASTER_KEY;
  if (!masterKeyHex) {
    // Only the embedded dev profile may invent its own key: with a config file or a shared Postgres,
    // a key generated on one machine would leave secrets unreadable on the next.
    if (profile !== 'dev' || env.DATABASE_URL) throw new ConfigError('MASTER_KEY', 'required with TOLLGATE_CONFIG or DATABASE_URL (64 hex characters)');
    masterKeyHex = devSecret(dataDir, 'master.key', () => randomBytes(32).toString('hex'));
    // A hand-edited or truncated key file would otherwise become a short Buffer and fail only at
    // the first encryption, far from the cause.
    if (!/^[0-9a-fA-F]{64}$/.test(masterKeyHex)) {
      throw new ConfigError('MASTER_KEY', `${join(dataDir, 'master.key')} must hold 64 hex characters`);
    }
  }
  let adminToken = env.ADMIN_TOKEN;
  if (!adminToken && profile === 'dev') adminToken = devSecret(dataDir, 'admin.token', () => 'tgadm_' + randomBytes(24).toString('hex'));

  let perOrderMicros = 10_000n; // 0.01
  if (file?.fees) {
    try {
      perOrderMicros = parseDecimal(file.fees.per_order, FEE_DECIMALS);
    } catch (err) {
      throw new ConfigError('fees.per_order', (err as Error).message);
    }
  }
  // Each entry is checked against its family's schema (a `kind: "solana"` entry is a Solana
  // cluster, anything else an EVM chain), so error keys keep naming `chains.<i>.<field>`.
  const chains: ChainConfig[] = [];
  const solanaChains: SolanaChainConfig[] = [];
  const ids = new Set<number>();
  (file?.chains ?? []).forEach((raw, i) => {
    const isSolana = typeof raw === 'object' && raw !== null && (raw as { kind?: unknown }).kind === 'solana';
    const c = isSolana ? solanaChainFromFile(check<SolanaChainFile>(SolanaChainFileSchema, raw, `chains.${i}`), i) : chainFromFile(check<Static<typeof ChainFileSchema>>(ChainFileSchema, raw, `chains.${i}`), i);
    if (ids.has(c.chainId)) throw new ConfigError(`chains.${i}.chain_id`, `duplicate chain ${c.chainId}`);
    ids.add(c.chainId);
    if (isSolana) solanaChains.push(c as SolanaChainConfig);
    else chains.push(c as ChainConfig);
  });
  const settlement = settlementSigner(env, cwd);
  if (env.SOLANA_DELEGATE_KEY && env.SOLANA_DELEGATE_KEYPAIR) throw new ConfigError('SOLANA_DELEGATE_KEYPAIR', 'set SOLANA_DELEGATE_KEY or SOLANA_DELEGATE_KEYPAIR, not both');
  const solanaDelegate = env.SOLANA_DELEGATE_KEYPAIR ? solanaDelegateKeypairFile(resolve(cwd, env.SOLANA_DELEGATE_KEYPAIR)) : solanaDelegateKey(env.SOLANA_DELEGATE_KEY);
  const withContract = chains.findIndex((c) => c.settlementContract);
  // A settlement contract without an executor would advertise DELEGATE mode that can never settle.
  if (withContract >= 0 && !settlement) {
    throw new ConfigError('SETTLEMENT_KEY', `a settlement signer (SETTLEMENT_KEY, SETTLEMENT_KEYSTORE or SETTLEMENT_SIGNER_URL) is required by chains.${withContract}.settlement_contract`);
  }
  const environment = file?.environment ?? 'test';
  const card = cardConfig(file?.card, env, environment);
  if ((env.SMTP_URL === undefined) !== (env.SMTP_FROM === undefined)) throw new ConfigError(env.SMTP_URL ? 'SMTP_FROM' : 'SMTP_URL', 'SMTP_URL and SMTP_FROM go together');
  const publicBaseUrl = (env.PUBLIC_BASE_URL ?? file?.public_base_url ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  return {
    profile,
    environment,
    port,
    host,
    databaseUrl: env.DATABASE_URL,
    dataDir,
    adminToken,
    masterKey: Buffer.from(masterKeyHex, 'hex'),
    publicBaseUrl,
    logLevel: env.LOG_LEVEL ?? 'info',
    trustProxy,
    ...(env.SMTP_URL && env.SMTP_FROM ? { smtp: new SmtpSettings(env.SMTP_URL, env.SMTP_FROM) } : {}),
    orderTtlSeconds: file?.order_ttl_seconds ?? 600,
    fees: { perOrderMicros },
    chains,
    solanaChains,
    ...(settlement ? { settlement } : {}),
    ...(solanaDelegate ? { solanaDelegate } : {}),
    ...(card ? { card } : {}),
    ...x402FacilitateFor(env.X402_FACILITATE_FOR, file?.x402?.facilitate_for),
  };
}

/** The x402 facilitation allowlist, lowercase; the variable wins over the file. */
function x402FacilitateFor(fromEnv: string | undefined, fromFile: readonly string[] | undefined): Pick<Config, 'x402FacilitateFor'> {
  const list = fromEnv !== undefined ? fromEnv.split(',').map((a) => a.trim()) : fromFile;
  return list && list.length > 0 ? { x402FacilitateFor: [...new Set(list.map((a) => a.toLowerCase()))] } : {};
}

/**
 * The card processor. TEST simulates card payments, so it never runs in production; STRIPE needs
 * both secrets from the environment (never from the file, which is often committed).
 */
function cardConfig(c: ConfigFile['card'], env: Env, environment: 'test' | 'production'): CardConfig | undefined {
  if (!c) return undefined;
  switch (c.processor) {
    case 'NONE':
      return { processor: 'NONE' };
    case 'TEST':
      if (environment === 'production') throw new ConfigError('card.processor', 'the TEST card processor simulates payments and is refused in production');
      return { processor: 'TEST' };
    case 'STRIPE':
      if (!env.STRIPE_SECRET_KEY) throw new ConfigError('STRIPE_SECRET_KEY', 'required by card.processor STRIPE');
      if (!env.STRIPE_WEBHOOK_SECRET) throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'required by card.processor STRIPE');
      return { processor: 'STRIPE', stripe: new StripeSettings(env.STRIPE_SECRET_KEY, env.STRIPE_WEBHOOK_SECRET, c.stripe_api, c.webhook_tolerance_seconds ?? 300) };
  }
}

/**
 * The executor's signer: exactly one of SETTLEMENT_KEY (raw), SETTLEMENT_KEYSTORE (+ a passphrase
 * from a file or the environment) and SETTLEMENT_SIGNER_URL (+ SETTLEMENT_SIGNER_ADDRESS). Errors
 * name the variable and the cause; never a value (a key, a passphrase, or a signer URL, which may
 * carry credentials).
 */
function settlementSigner(env: Env, cwd: string): EvmSigner | undefined {
  const modes = (['SETTLEMENT_KEY', 'SETTLEMENT_KEYSTORE', 'SETTLEMENT_SIGNER_URL'] as const).filter((k) => env[k] !== undefined);
  if (modes.length > 1) throw new ConfigError(modes[1]!, `set one settlement signer, not ${modes.join(' and ')}`);
  const passVars = (['SETTLEMENT_KEYSTORE_PASSPHRASE', 'SETTLEMENT_KEYSTORE_PASSPHRASE_FILE'] as const).filter((k) => env[k] !== undefined);
  if (passVars.length > 0 && modes[0] !== 'SETTLEMENT_KEYSTORE') throw new ConfigError(passVars[0]!, 'only used with SETTLEMENT_KEYSTORE');
  if (env.SETTLEMENT_SIGNER_ADDRESS && modes[0] !== 'SETTLEMENT_SIGNER_URL') throw new ConfigError('SETTLEMENT_SIGNER_ADDRESS', 'only used with SETTLEMENT_SIGNER_URL');
  switch (modes[0]) {
    case undefined:
      return undefined;
    case 'SETTLEMENT_KEY':
      try {
        return new RawKeySigner((env.SETTLEMENT_KEY!.startsWith('0x') ? env.SETTLEMENT_KEY! : `0x${env.SETTLEMENT_KEY}`).toLowerCase() as `0x${string}`);
      } catch {
        throw new ConfigError('SETTLEMENT_KEY', 'not a valid secp256k1 private key');
      }
    case 'SETTLEMENT_KEYSTORE': {
      if (passVars.length === 2) throw new ConfigError('SETTLEMENT_KEYSTORE_PASSPHRASE', 'set SETTLEMENT_KEYSTORE_PASSPHRASE_FILE or SETTLEMENT_KEYSTORE_PASSPHRASE, not both');
      if (passVars.length === 0) throw new ConfigError('SETTLEMENT_KEYSTORE_PASSPHRASE_FILE', 'required by SETTLEMENT_KEYSTORE (or SETTLEMENT_KEYSTORE_PASSPHRASE)');
      try {
        const passphrase = env.SETTLEMENT_KEYSTORE_PASSPHRASE ?? passphraseFromFile(resolve(cwd, env.SETTLEMENT_KEYSTORE_PASSPHRASE_FILE!));
        return readKeystoreSigner(resolve(cwd, env.SETTLEMENT_KEYSTORE!), passphrase);
      } catch (err) {
        if (err instanceof KeystoreError) throw new ConfigError('SETTLEMENT_KEYSTORE', err.message);
        throw new ConfigError('SETTLEMENT_KEYSTORE', 'cannot be used');
      }
    }
    case 'SETTLEMENT_SIGNER_URL':
      if (!env.SETTLEMENT_SIGNER_ADDRESS) throw new ConfigError('SETTLEMENT_SIGNER_ADDRESS', 'required by SETTLEMENT_SIGNER_URL: the account the remote signer holds for Tollgate');
      try {
        return new RemoteSigner({ url: env.SETTLEMENT_SIGNER_URL!, address: env.SETTLEMENT_SIGNER_ADDRESS as `0x${string}` });
      } catch (err) {
        throw new ConfigError('SETTLEMENT_SIGNER_URL', err instanceof RemoteSignerError ? err.message : 'cannot be used');
      }
  }
}
