import { loadConfig, ConfigError } from '../config/load.ts';
import { startTollgate, type Role, type Tollgate } from '../main.ts';
import type { Config } from '../config/schema.ts';
import { openDatabase } from '../db/open.ts';
import type { DevProfileChain } from '../dev/profile.ts';
import { portalAuth } from '../portal/http.ts';
import { SettlementContractError, verifySettlementContracts } from '../settlement/contract-check.ts';
import type { LocalSvm } from '@tollgate/svm';

/**
 * `tollgate serve`: parse config, (dev profile: start anvil + tokens), start Tollgate, print how to
 * use it, and stop everything cleanly on SIGINT/SIGTERM.
 */
export async function serve(role: Role): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  let tg: Tollgate | undefined;
  let chain: DevProfileChain | undefined;
  let svm: LocalSvm | undefined;
  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  // Handlers go in before anything starts: a SIGTERM during the start (a supervisor giving up on a
  // slow start) must still stop the anvil child, or it outlives us and keeps its port. Until the
  // first listener is added the OS default (die at once) applies, so they cannot come after the
  // spawn: the database's open runs synchronous code long enough for a signal to land in between.
  // A stop during the start lets the step under way finish (`starting` settles), skips the rest
  // and closes what exists; closing the database under a running step would crash it instead.
  let stopRequested = false;
  let markStarted!: () => void;
  const starting = new Promise<void>((resolve) => (markStarted = resolve));
  const stop = async (signal: string) => {
    console.error(`\ntollgate: ${signal} received, stopping…`);
    stopRequested = true;
    await starting;
    await tg?.close().catch(() => {});
    await db?.close().catch(() => {});
    await chain?.stop();
    await svm?.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  // The embedded database's first open (PGlite initdb, ~4 s here) and the dev chain start
  // (~0.3 s) are independent: run them side by side so `npm start` answers sooner.
  // The dev profile's module (anvil, the local SVM, the demo merchants) is loaded only for the dev
  // profile: a production gateway never loads those development packages (nor needs them installed).
  const dev = config.profile === 'dev' ? await import('../dev/profile.ts') : undefined;
  const [chainOutcome, dbOutcome, svmOutcome] = await Promise.allSettled([
    dev ? dev.startDevProfileChain(config) : Promise.resolve(undefined),
    openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }),
    dev ? dev.startDevProfileSolana(config) : Promise.resolve(undefined),
  ]);
  chain = chainOutcome.status === 'fulfilled' ? chainOutcome.value : undefined;
  db = dbOutcome.status === 'fulfilled' ? dbOutcome.value : undefined;
  svm = svmOutcome.status === 'fulfilled' ? svmOutcome.value : undefined;
  try {
    if (chainOutcome.status === 'rejected') throw chainOutcome.reason;
    if (svmOutcome.status === 'rejected') throw svmOutcome.reason;
    if (dbOutcome.status === 'rejected') throw dbOutcome.reason;
    if (stopRequested) return markStarted();
    // A remote signer that is down or does not hold the configured address would fail every
    // settlement later: refuse to start with one line instead (signers/port.ts check()).
    if (config.settlement) await config.settlement.check().catch((err: Error) => Promise.reject(new Error(`settlement signer (${config.settlement!.mode}): ${err.message}`)));
    // Every settlement_contract is the shipped code with our executor, before anything is served:
    // a DELEGATE order must never name an address that cannot settle it (settlement/contract-check.ts).
    await verifySettlementContracts(config, { warn: (line) => console.error(line) });
    tg = await startTollgate(config, { role, db: db! });
    if (stopRequested) return markStarted();
  } catch (err) {
    await chain?.stop();
    await svm?.stop();
    await db?.close().catch(() => {});
    console.error(`tollgate: ${(err as Error).message}`);
    process.exit(err instanceof SettlementContractError ? 78 : 1); // EX_CONFIG: the configuration names the wrong contract
  }

  try {
    await announce(config, tg, chain, svm);
  } finally {
    markStarted();
  }
}

/** Prints how to use the running gateway (dev profile: after making sure the demo merchant exists). */
async function announce(config: Config, tg: Tollgate, chain: DevProfileChain | undefined, svm: LocalSvm | undefined): Promise<void> {
  if (chain) {
    const { ensureDemoDelegateMerchant, ensureDemoMerchant, ensureDemoPortalUser, writeDevFile } = await import('../dev/profile.ts');
    const demo = await ensureDemoMerchant(tg.deps.db, tg.deps.merchants, config, chain, svm);
    const delegate = await ensureDemoDelegateMerchant(tg.deps.db, tg.deps.merchants, tg.deps.delegate, config, chain);
    const devFile = writeDevFile(
      config,
      tg.url ?? '',
      chain,
      [
        { ...demo, receiveType: 'DIRECT' },
        { ...delegate, receiveType: 'DELEGATE' },
      ],
      svm,
    );
    const portal = await ensureDemoPortalUser(portalAuth(tg.deps), config.dataDir);
    const payer = chain.payers[0]!;
    const lines = [
      '',
      'Tollgate dev profile is running (test environment, embedded PGlite, local anvil chain).',
      `  node              ${process.version}`,
      `  API base URL      ${tg.url}`,
      `  OpenAPI           ${tg.url}/openapi.json`,
      `  admin token       ${config.adminToken}   (Authorization: Bearer …; also in ${config.dataDir}/admin.token)`,
      `  chain             ${chain.chainId} at ${chain.rpcUrl}`,
      ...chain.tokens.map((t) => `  token ${t.symbol.padEnd(12)}${t.address} (${t.decimals} decimals)`),
      `  demo merchant     ${demo.merchantId}  receiving wallet ${demo.wallet}`,
      `  demo API key      ${demo.apiKey}`,
      `  demo API secret   ${demo.apiSecret}`,
      `  DELEGATE merchant ${delegate.merchantId}  callback ${chain.adapter.address} (example credit adapter)`,
      `  settlement        ${chain.settlementContract}`,
      `  dev file          ${devFile}   (all of the above as JSON)`,
      `  portal            ${tg.url}/portal  sign in with ${portal.email} / ${portal.password}   (also in ${config.dataDir}/portal.password)`,
      `  funded payer      ${payer.address}`,
      `  payer private key ${payer.privateKey}   (public anvil test key: never use on a real chain)`,
      ...(svm
        ? [
            `  solana            ${config.solanaChains?.[0]?.chainId} (${svm.caip2}) local SVM at ${svm.rpcUrl}  (docs/solana.md)`,
            ...svm.tokens.map((t) => `  token ${t.symbol.padEnd(12)}${t.mint} (${t.decimals} decimals, ${t.symbol === 'USDT' ? 'Token-2022' : 'SPL Token'})`),
            `  solana payer      ${svm.payers[0]!.address}  (keypair in the dev file; derived from a public seed in packages/svm)`,
          ]
        : []),
      '',
      'Try: npx tollgate merchant show demo        Stop: Ctrl-C',
      '',
    ];
    console.log(lines.join('\n'));
  } else {
    console.log(`tollgate listening on ${tg.url ?? '(worker only)'} (node ${process.version})`);
  }
}
