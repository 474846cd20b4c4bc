import { startDevChain, type DevChain } from '@tollgate/devchain';
import { startLocalSvm, type LocalSvm } from '@tollgate/svm';
import { solanaChainFromFile } from '../config/solana.ts';
import { CHAIN_PRESETS } from '../config/presets.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { decryptSecret } from '../merchants/secrets.ts';
import type { MerchantService } from '../merchants/service.ts';
import { FEE_DECIMALS } from '../config/load.ts';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { PortalAuth } from '../portal/auth.ts';

export const DEMO_MERCHANT_ID = 'demo';

/**
 * The demo merchant's return-URL allowlist. Ports are part of an origin, so bare
 * `http://localhost` would refuse the shop a developer runs on :3000 or :5173; the reserved
 * `shop.example` domain is the one the README and SDK examples use, so they run as written.
 * Set only when the merchant is created: later changes (`tollgate merchant return-urls`) are kept.
 */
export const DEMO_RETURN_URLS = [
  'http://localhost',
  'http://127.0.0.1',
  'http://localhost:3000',
  'http://127.0.0.1:3000',
  'http://localhost:5173',
  'http://localhost:8080',
  'https://shop.example',
] as const;

/**
 * Dev profile, step 1: a local anvil chain with TestUSDC/TestUSDT, written into the config as the
 * only chain. Anvil listens on 127.0.0.1:8545 (what wallets expect) when that port is free, else on
 * any free port; it mines a block every second so confirmations progress without traffic.
 */
export async function startDevProfileChain(config: Config): Promise<DevChain> {
  let chain: DevChain;
  // Own process group: a Ctrl-C reaches the gateway only, which stops anvil after its watcher
  // (otherwise anvil died first and the last watcher tick logged an error at every stop).
  try {
    chain = await startDevChain({ port: 8545, blockTime: 1, ownProcessGroup: true });
  } catch {
    chain = await startDevChain({ port: 0, blockTime: 1, ownProcessGroup: true });
  }
  const preset = CHAIN_PRESETS[31337]!;
  config.chains = [
    {
      chainId: chain.chainId,
      name: preset.name,
      rpcUrl: chain.rpcUrl,
      confirmations: preset.confirmations,
      finalityConfirmations: preset.finality_confirmations,
      pollIntervalMs: preset.poll_interval_ms,
      tokens: chain.tokens.map((t) => ({ symbol: t.symbol, address: t.address.toLowerCase() as `0x${string}`, decimals: t.decimals })),
    },
  ];
  return chain;
}

/** Tollgate's chain id for the local SVM of the dev profile (docs/solana.md). */
export const DEV_SOLANA_CHAIN_ID = 792703800;

/**
 * Dev profile, Solana: the local SVM (packages/svm) on 127.0.0.1:8899 (the port Solana tools
 * expect) when free, else any free port, with test USDC (SPL Token) and USDT (Token-2022), written
 * into the config as the only Solana cluster. 400 ms slots; finalized 8 slots after processed.
 */
export async function startDevProfileSolana(config: Config): Promise<LocalSvm> {
  const opts = { slotMs: 400, confirmLag: 1, finalizeLag: 8 };
  let svm: LocalSvm;
  try {
    svm = await startLocalSvm({ ...opts, port: 8899 });
  } catch {
    svm = await startLocalSvm({ ...opts, port: 0 });
  }
  config.solanaChains = [
    solanaChainFromFile(
      {
        kind: 'solana',
        chain_id: DEV_SOLANA_CHAIN_ID,
        name: 'Local SVM',
        rpc_url: svm.rpcUrl,
        genesis_hash: svm.genesisHash,
        poll_interval_ms: 400,
        tokens: svm.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, program: t.symbol === 'USDT' ? 'token-2022' : 'spl-token' })),
      },
      0,
    ),
  ];
  return svm;
}

export interface DemoMerchant {
  merchantId: string;
  apiKey: string;
  apiSecret: string;
  wallet: string;
}

/**
 * Dev profile, step 2: the demo merchant (idempotent across restarts of the same DATA_DIR), with a
 * wallet for every dev token and at least 100.00 of fee balance. The receiving address is anvil
 * account 9, whose key is public, so a developer can move the received test tokens.
 */
export async function ensureDemoMerchant(db: Database, merchants: MerchantService, config: Config, chain: DevChain, svm?: LocalSvm): Promise<DemoMerchant> {
  const wallet = chain.payers[chain.payers.length - 1]!.address.toLowerCase();
  await merchants.createMerchant({ name: 'Demo Merchant', merchantId: DEMO_MERCHANT_ID, returnUrls: [...DEMO_RETURN_URLS] });
  for (const t of chain.tokens) await merchants.addWallet(DEMO_MERCHANT_ID, { chainId: chain.chainId, tokenSymbol: t.symbol, address: wallet });
  // Solana: the SVM's last funded payer receives (its key is derived from a public seed, like anvil's).
  if (svm) for (const t of svm.tokens) await merchants.addWallet(DEMO_MERCHANT_ID, { chainId: DEV_SOLANA_CHAIN_ID, tokenSymbol: t.symbol, address: svm.payers[svm.payers.length - 1]!.address });
  const balance = await merchants.getFeeBalance(DEMO_MERCHANT_ID);
  const floor = 100n * 10n ** BigInt(FEE_DECIMALS);
  if (balance && balance.available < floor) await merchants.topUp(DEMO_MERCHANT_ID, floor - balance.available);
  // The dev profile prints the demo secret at every start; it reads it back from the encrypted row.
  const { rows } = await db.query<{ api_key: string; secret_ciphertext: string }>(
    'SELECT api_key, secret_ciphertext FROM api_keys WHERE merchant_id = $1 AND revoked_at IS NULL ORDER BY created_at LIMIT 1',
    [DEMO_MERCHANT_ID],
  );
  const key = rows[0];
  if (!key) throw new Error('demo merchant has no active API key; delete the data directory to recreate it');
  return { merchantId: DEMO_MERCHANT_ID, apiKey: key.api_key, apiSecret: decryptSecret(config.masterKey, key.secret_ciphertext, key.api_key), wallet };
}

export const DEMO_PORTAL_EMAIL = 'demo@example.com';

/**
 * Dev profile, step 3: the demo merchant's portal owner. Its password is generated once and kept in
 * DATA_DIR/portal.password (mode 0600) like the admin token, so no password is committed anywhere.
 */
export async function ensureDemoPortalUser(auth: PortalAuth, dataDir: string): Promise<{ email: string; password: string }> {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'portal.password');
  const fresh = !existsSync(file);
  if (fresh) writeFileSync(file, randomBytes(15).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
  const password = readFileSync(file, 'utf8').trim();
  const out = await auth.createUser({ merchantId: DEMO_MERCHANT_ID, email: DEMO_PORTAL_EMAIL, password, role: 'owner' });
  // The user outlived its password file: the new file's password becomes its password.
  if (out.kind === 'exists' && fresh) await auth.resetPassword(DEMO_PORTAL_EMAIL, password);
  return { email: DEMO_PORTAL_EMAIL, password };
}
