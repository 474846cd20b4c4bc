import { ConfigError, loadConfig } from '../../config/load.ts';
import type { Config } from '../../config/schema.ts';
import { checkDatabase } from './database.ts';
import { checkEvmChain } from './evm.ts';
import { checkSolanaCluster } from './solana.ts';
import type { CheckResult, DoctorOptions } from './types.ts';

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
