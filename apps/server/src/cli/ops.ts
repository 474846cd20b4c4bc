// The operator's maintenance and diagnosis commands. The commands themselves load the database
// adapters, viem and PGlite: they are imported only when one of them runs, so admin commands stay fast.
export const OPS_COMMANDS = ['doctor', 'migrate', 'backup', 'restore', 'rotate-master-key'];

export const OPS_USAGE = `  doctor [--json] [--min-balance CHAIN_ID=AMOUNT …] [--min-sol-balance SOL] [--head-timeout S] [--max-clock-skew S]
                                            check config, database, chains, settlement contracts, balances, clock
  migrate [status] [--dry-run]              migration status; apply pending ones; --dry-run applies and rolls back
  backup --to FILE                          snapshot of the embedded database (refused while a gateway runs on it)
  restore --from FILE [--replace]           make a snapshot the embedded database (--replace moves the current one aside)
  rotate-master-key --new-key-file FILE     re-encrypt every secret at rest under a new key (all processes stopped;
                                            FILE is created with a new key when it does not exist)`;

export async function runOpsCommand(argv: string[]): Promise<void> {
  if (argv[0] === 'doctor') return (await import('./doctor.ts')).runDoctorCommand(argv.slice(1));
  return (await import('./maintenance.ts')).runMaintenanceCommand(argv);
}
