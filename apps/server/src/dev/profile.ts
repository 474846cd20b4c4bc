import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { deploySettlement, startDevChain, type DevChain } from '@tollgate/devchain';
import { startLocalSvm, type LocalSvm } from '@tollgate/svm';
import { solanaChainFromFile } from '../config/solana.ts';
import { CHAIN_PRESETS } from '../config/presets.ts';
import type { Config } from '../config/schema.ts';
import { RawKeySigner } from '../signers/raw/index.ts';
import type { DelegateService } from '../settlement/delegate.ts';
import type { Database } from '../db/database.ts';
import { decryptSecret } from '../merchants/secrets.ts';
import type { MerchantService } from '../merchants/service.ts';
import { FEE_DECIMALS } from '../config/load.ts';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { PortalAuth } from '../portal/auth.ts';

export const DEMO_MERCHANT_ID = 'demo';
/** The demo DELEGATE merchant: settled through the example callback adapter. */
export const DEMO_DELEGATE_MERCHANT_ID = 'demo-delegate';

/**
 * The demo merchant's return-URL allowlist. Ports are part of an origin, so bare
 * `http://localhost` would refuse the shop a developer runs on :3000 or :5173; the reserved
 * `shop.example` domain is the one the README and SDK examples use, so they run as written.
 * Set only when the merchant is created: later changes (`tollgate merchant return-urls`) are kept.
 */
export const DEMO_RETURN_URLS = ['http://localhost', 'http://127.0.0.1', 'http://localhost:3000', 'http://127.0.0.1:3000', 'http://localhost:5173', 'http://localhost:8080', 'https://shop.example'] as const;

/** The dev chain with DELEGATE set up: the settlement contract and the example callback adapter. */
export type DevProfileChain = DevChain & {
  settlementContract: `0x${string}`;
  adapter: { address: `0x${string}`; eip712Name: string; eip712Version: string };
};

/**
 * Dev profile, step 1: a local anvil chain with TestUSDC (EIP-3009) and TestUSDT (Tether-like, no
 * EIP-3009: both DELEGATE flows exist locally), the settlement contract and the example callback
 * adapter, written into the config as the only chain with DELEGATE enabled. The executor key is
 * SETTLEMENT_KEY when set, else anvil account 8 (a public test key). Anvil listens on
 * 127.0.0.1:8545 (what wallets expect) when that port is free, else on any free port; it mines a
 * block every second so confirmations progress without traffic.
 */
export async function startDevProfileChain(config: Config): Promise<DevProfileChain> {
  let chain: DevChain;
  // Own process group: a Ctrl-C reaches the gateway only, which stops anvil after its watcher
  // (otherwise anvil died first and the last watcher tick logged an error at every stop).
  try {
    chain = await startDevChain({ port: 8545, blockTime: 1, ownProcessGroup: true, usdt: 'tether' });
  } catch {
    chain = await startDevChain({ port: 0, blockTime: 1, ownProcessGroup: true, usdt: 'tether' });
  }
  if (!config.settlement) {
    const key = chain.payers[8]!.privateKey;
    config.settlement = new RawKeySigner(key);
  }
  let dep;
  try {
    dep = await deploySettlement({
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
      deployerKey: chain.deployer.privateKey,
      executor: config.settlement.executorAddress,
      adapterTokens: chain.tokens.map((t) => t.address),
    });
  } catch (err) {
    await chain.stop();
    throw err;
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
      settlementContract: dep.settlement.toLowerCase() as `0x${string}`,
      tokens: chain.tokens.map((t) => ({ symbol: t.symbol, address: t.address.toLowerCase() as `0x${string}`, decimals: t.decimals, eip3009: t.eip3009 })),
    },
  ];
  const adapter = dep.adapter!;
  return Object.assign(chain, {
    settlementContract: dep.settlement.toLowerCase() as `0x${string}`,
    adapter: { address: adapter.address.toLowerCase() as `0x${string}`, eip712Name: adapter.eip712Name, eip712Version: adapter.eip712Version },
  });
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
  } catch (err) {
    // Only a taken port falls back (another checkout's `npm start`, a solana-test-validator): any
    // other failure would fail again on port 0, after a second full start.
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
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
  return ensureMerchant(db, merchants, config, chain, { id: DEMO_MERCHANT_ID, name: 'Demo Merchant', receiveType: 'DIRECT' }, svm);
}

/**
 * Dev profile, step 3: the demo DELEGATE merchant `demo-delegate` (same wallets and fee floor),
 * with the example callback adapter registered on the dev chain. The registration is renewed
 * when the adapter address differs from the active one (a data directory kept across chains).
 */
export async function ensureDemoDelegateMerchant(db: Database, merchants: MerchantService, delegate: DelegateService, config: Config, chain: DevProfileChain): Promise<DemoMerchant> {
  const demo = await ensureMerchant(db, merchants, config, chain, { id: DEMO_DELEGATE_MERCHANT_ID, name: 'Demo Delegate Merchant', receiveType: 'DELEGATE' });
  const active = (await delegate.listCallbacks(DEMO_DELEGATE_MERCHANT_ID))?.find((c) => c.chain_id === chain.chainId);
  const a = chain.adapter;
  if (active?.callback_contract !== a.address || active.eip712_name !== a.eip712Name || active.eip712_version !== a.eip712Version) {
    const r = await delegate.registerCallback(DEMO_DELEGATE_MERCHANT_ID, { chainId: chain.chainId, callbackContract: a.address, eip712Name: a.eip712Name, eip712Version: a.eip712Version });
    if (r.kind !== 'registered') throw new Error(`demo DELEGATE merchant: callback registration refused (${r.kind})`);
  }
  return demo;
}

async function ensureMerchant(db: Database, merchants: MerchantService, config: Config, chain: DevChain, m: { id: string; name: string; receiveType: 'DIRECT' | 'DELEGATE' }, svm?: LocalSvm): Promise<DemoMerchant> {
  const wallet = chain.payers[chain.payers.length - 1]!.address.toLowerCase();
  await merchants.createMerchant({ name: m.name, merchantId: m.id, receiveType: m.receiveType, returnUrls: [...DEMO_RETURN_URLS] });
  for (const t of chain.tokens) await merchants.addWallet(m.id, { chainId: chain.chainId, tokenSymbol: t.symbol, address: wallet });
  // Solana: the SVM's last funded payer receives (its key is derived from a public seed, like anvil's).
  if (svm) for (const t of svm.tokens) await merchants.addWallet(m.id, { chainId: DEV_SOLANA_CHAIN_ID, tokenSymbol: t.symbol, address: svm.payers[svm.payers.length - 1]!.address });
  const balance = await merchants.getFeeBalance(m.id);
  const floor = 100n * 10n ** BigInt(FEE_DECIMALS);
  if (balance && balance.available < floor) await merchants.topUp(m.id, floor - balance.available);
  // The dev profile prints the demo secret at every start; it reads it back from the encrypted row.
  const { rows } = await db.query<{ api_key: string; secret_ciphertext: string }>('SELECT api_key, secret_ciphertext FROM api_keys WHERE merchant_id = $1 AND revoked_at IS NULL ORDER BY created_at LIMIT 1', [m.id]);
  const key = rows[0];
  if (!key) throw new Error(`${m.id} merchant has no active API key; delete the data directory to recreate it`);
  return { merchantId: m.id, apiKey: key.api_key, apiSecret: decryptSecret(config.masterKey, key.secret_ciphertext, key.api_key), wallet };
}

/**
 * The dev profile file: DATA_DIR/dev.json (mode 0600: it holds the admin token and the demo
 * secrets), so tools and tests need not scrape the banner. Rewritten at every start. `solana` is
 * what a newcomer needs to pay a Solana order with their own code (docs/solana.md "Paying locally"):
 * the local SVM's RPC URL, its mints and a payer funded with SOL and both tokens, whose keypair is
 * in the Solana CLI's file format (64 bytes: seed ‖ public key).
 */
export function writeDevFile(config: Config, baseUrl: string, chain: DevProfileChain, merchants: (DemoMerchant & { receiveType: 'DIRECT' | 'DELEGATE' })[], svm?: LocalSvm): string {
  const payer = chain.payers[0]!;
  const cluster = config.solanaChains?.[0];
  const file = {
    base_url: baseUrl,
    admin_token: config.adminToken,
    chain: { chain_id: chain.chainId, rpc_url: chain.rpcUrl, settlement_contract: chain.settlementContract },
    tokens: chain.tokens.map((t) => ({ symbol: t.symbol, address: t.address, decimals: t.decimals, eip3009: t.eip3009 })),
    payer: { address: payer.address, private_key: payer.privateKey },
    merchants: merchants.map((m) => ({
      merchant_id: m.merchantId,
      receive_type: m.receiveType,
      api_key: m.apiKey,
      api_secret: m.apiSecret,
      ...(m.receiveType === 'DELEGATE' ? { callback_contract: chain.adapter.address } : {}),
    })),
    ...(svm && cluster
      ? {
          solana: {
            chain_id: cluster.chainId,
            network: cluster.network,
            rpc_url: svm.rpcUrl,
            genesis_hash: svm.genesisHash,
            tokens: cluster.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, program_id: t.programId })),
            payer: { address: svm.payers[0]!.address, keypair: svm.payerKeypairs[0]! },
            ...(config.solanaDelegate ? { delegate_address: config.solanaDelegate.address } : {}),
          },
        }
      : {}),
  };
  const path = join(config.dataDir, 'dev.json');
  writeFileSync(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600); // an existing file keeps its old mode on write
  return path;
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
