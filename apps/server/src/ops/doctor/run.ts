import { ConfigError, loadConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { checkDatabase } from './database.ts';
import { checkEvmChain } from './evm.ts';
import { checkSolanaCluster } from './solana.ts';
import { within, type CheckResult, type DoctorOptions } from './types.ts';

export interface DoctorReport {
  /** false when any check failed (warnings and skips do not fail) */
  ok: boolean;
  checks: CheckResult[];
}

/**
 * `tollgate doctor`: everything a deployment needs from outside its process, checked the way the
 * gateway will use it, with the gateway's own configuration. The configuration comes first (the
 * rest needs it); the database and every chain are then checked side by side.
 */
export async function runDoctor(env: Record<string, string | undefined>, opts: DoctorOptions, now: () => number = Date.now): Promise<DoctorReport> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { ok: false, checks: [{ name: 'config', status: 'fail', detail: err.message }] };
  }
  const checks: CheckResult[] = [configLine(config)];
  const executor = config.settlement?.executorAddress;
  const groups = await Promise.all([
    checkDatabase(config, opts),
    ...(config.settlement ? [checkSigner(config.settlement, opts)] : []),
    ...config.chains.map((c) => checkEvmChain(c, executor, opts, now)),
    ...(config.solanaChains ?? []).map((c) => checkSolanaCluster(c, config.solanaDelegate?.address, opts)),
  ]);
  checks.push(...groups.flat());
  return { ok: checks.every((c) => c.status !== 'fail'), checks };
}

function configLine(c: Config): CheckResult {
  const solana = c.solanaChains?.length ?? 0;
  const parts = [
    c.profile === 'dev' ? 'dev profile (no TOLLGATE_CONFIG)' : `${c.environment} environment`,
    c.databaseUrl ? 'PostgreSQL' : `embedded database in ${c.dataDir}`,
    `${c.chains.length} EVM chain(s)`,
    ...(solana ? [`${solana} Solana cluster(s)`] : []),
    c.settlement ? `DELEGATE executor ${c.settlement.executorAddress}` : 'no DELEGATE executor',
  ];
  const data = { profile: c.profile, environment: c.environment, evm_chains: c.chains.map((x) => x.chainId), solana_clusters: (c.solanaChains ?? []).map((x) => x.chainId), executor: c.settlement?.executorAddress ?? null };
  if (c.profile === 'dev') return { name: 'config', status: 'warn', detail: `valid; ${parts.join(', ')}: serve starts its own local chain, which doctor cannot see`, data };
  if (c.environment === 'production' && !c.publicBaseUrl.startsWith('https://')) {
    return { name: 'config', status: 'warn', detail: `valid; ${parts.join(', ')}; PUBLIC_BASE_URL ${c.publicBaseUrl} is not https: payers' pages and links would be served without TLS`, data };
  }
  return { name: 'config', status: 'ok', detail: `valid; ${parts.join(', ')}`, data };
}

/**
 * The executor's signer as serve checks it at start (signers/port.ts check()): a remote signer
 * must answer and hold the configured address; a raw key or a keystore is usable once loaded.
 * Its messages name no key material and no credential of the signer's URL.
 */
async function checkSigner(signer: NonNullable<Config['settlement']>, opts: DoctorOptions): Promise<CheckResult[]> {
  const name = 'settlement signer';
  const data = { mode: signer.mode, executor: signer.executorAddress };
  try {
    await within(signer.check(), Math.max(opts.callTimeoutMs, 10_000));
    return [{ name, status: 'ok', detail: `${signer.mode}, ${signer.executorAddress}${signer.mode === 'remote' ? ': the remote signer answers and holds it' : ''}`, data }];
  } catch (err) {
    return [{ name, status: 'fail', detail: `${signer.mode}, ${signer.executorAddress}: ${(err as Error).message.replace(/\s+/g, ' ').slice(0, 300)}`, data }];
  }
}
