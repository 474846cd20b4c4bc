import { parseArgs } from 'node:util';
import { parseEther } from 'viem';
import { runDoctor } from '../ops/doctor/run.ts';
import { DEFAULT_DOCTOR_OPTIONS, type DoctorOptions } from '../ops/doctor/types.ts';
import { CliError } from './client.ts';

/** Parses a decimal amount of 18 (EVM native) or 9 (SOL) decimals exactly: never a float. */
function amount(raw: string, decimals: 18 | 9, what: string): bigint {
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new CliError(`${what}: ${raw} is not a decimal amount`);
  const [whole, frac = ''] = raw.split('.');
  if (frac.length > decimals) throw new CliError(`${what}: at most ${decimals} decimals`);
  return decimals === 18 ? parseEther(raw) : BigInt(whole!) * 10n ** 9n + BigInt(frac.padEnd(9, '0'));
}

function positive(raw: string | undefined, what: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new CliError(`${what} must be a positive number of seconds`);
  return n;
}

/**
 * `tollgate doctor [--json]`: one line per check, exit 1 when any failed. Reads the same
 * configuration as `serve` (TOLLGATE_CONFIG, DATABASE_URL or DATA_DIR, MASTER_KEY, SETTLEMENT_KEY…).
 */
export async function runDoctorCommand(argv: string[]): Promise<void> {
  const { values: o } = parseArgs({
    args: argv,
    options: {
      json: { type: 'boolean', default: false },
      'min-balance': { type: 'string', multiple: true },
      'min-sol-balance': { type: 'string' },
      'head-timeout': { type: 'string' },
      'max-clock-skew': { type: 'string' },
    },
  });
  const minBalanceWei = new Map<number, bigint>();
  for (const spec of o['min-balance'] ?? []) {
    const m = /^(\d+)=(.+)$/.exec(spec);
    if (!m) throw new CliError(`--min-balance takes CHAIN_ID=AMOUNT (native units, e.g. 137=5), not ${spec}`);
    minBalanceWei.set(Number(m[1]), amount(m[2]!, 18, `--min-balance ${m[1]}`));
  }
  const opts: DoctorOptions = {
    ...DEFAULT_DOCTOR_OPTIONS,
    minBalanceWei,
    headTimeoutMs: positive(o['head-timeout'], '--head-timeout', DEFAULT_DOCTOR_OPTIONS.headTimeoutMs / 1000) * 1000,
    maxClockSkewSeconds: positive(o['max-clock-skew'], '--max-clock-skew', DEFAULT_DOCTOR_OPTIONS.maxClockSkewSeconds),
    ...(o['min-sol-balance'] !== undefined ? { minSolLamports: amount(o['min-sol-balance'], 9, '--min-sol-balance') } : {}),
  };
  const report = await runDoctor(process.env, opts);
  if (o.json) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    const width = Math.min(48, Math.max(...report.checks.map((c) => c.name.length)));
    for (const c of report.checks) console.log(`${c.status.toUpperCase().padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}`);
    const failed = report.checks.filter((c) => c.status === 'fail').length;
    console.log(failed ? `\n${failed} check(s) failed.` : '\nAll checks passed.');
  }
  process.exitCode = report.ok ? 0 : 1;
}
