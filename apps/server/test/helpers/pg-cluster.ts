import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { env } from './env.ts';
import { freePort } from './net.ts';

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of the test's own: its own data directory and loopback port, so a test may
 * stop, kill and restart the database server (outages, crashes) without touching the shared
 * TEST_DATABASE_URL server other test files use at the same time.
 *
 * Tests run as root in CI and `postgres` refuses to run as root, so as root every server command
 * runs through `runuser -u postgres --` on a data directory chowned to postgres; as any other user
 * it runs directly.
 */
export interface PgCluster {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust auth). */
  url: string;
  port: number;
  dataDir: string;
  /** Stops the server (`fast` by default: disconnects clients, clean shutdown; `immediate`: like a crash). */
  stop(mode?: 'smart' | 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port and data directory; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it (immediate) and removes its files. Safe to call twice. */
  destroy(): Promise<void>;
  /**
   * Sends `sig` to the postmaster and every backend. SIGSTOP freezes the server like a black-holed
   * network (connections open, nothing answers, nothing refuses); SIGCONT resumes it.
   */
  signal(sig: 'SIGSTOP' | 'SIGCONT'): Promise<void>;
  /** The server log so far (for failure messages). */
  log(): string;
}

export interface PgClusterOptions {
  /**
   * fsync (default off). A process crash (Tollgate or postgres itself, kill -9) loses nothing that
   * was committed either way: the WAL is in the kernel's page cache. Only a machine crash needs
   * fsync, and on a small CI machine it costs seconds per test file.
   */
  fsync?: boolean;
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string>;
}

function findBinDir(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  try {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(`/usr/lib/postgresql/${v}/bin/initdb`)) return `/usr/lib/postgresql/${v}/bin`;
  } catch {
    /* no Debian layout */
  }
  return undefined;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Whether initdb/pg_ctl are installed (and, as root, a `postgres` user and runuser exist). */
export function pgClusterAvailable(): boolean {
  if (!findBinDir()) return false;
  if (!isRoot()) return true;
  return spawnSync('id', ['-u', 'postgres']).status === 0 && spawnSync('runuser', ['--help']).status === 0;
}

/**
 * Whether this test file can start a private cluster; with TOLLGATE_TEST_STRICT=1 a missing
 * PostgreSQL installation is a failure, not a skip.
 */
export function requirePgCluster(): boolean {
  if (pgClusterAvailable()) return true;
  if (env.TOLLGATE_TEST_STRICT === '1') throw new Error('TOLLGATE_TEST_STRICT=1 but initdb/pg_ctl (or the postgres user) are not available: private-cluster tests cannot run');
  return false;
}

const live = new Set<() => void>();
let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test process that dies (assertion in `before`, Ctrl-C) must not leave a postgres running.
  process.on('exit', () => {
    for (const kill of live) kill();
  });
}

/**
 * initdb + pg_ctl start of a fresh cluster on a free loopback port; ~1–2 s.
 *
 * @example
 * const pg = await startPgCluster();
 * // DATABASE_URL=pg.url … ; await pg.stop('immediate'); await pg.start(); … await pg.destroy();
 */
export async function startPgCluster(opts: PgClusterOptions = {}): Promise<PgCluster> {
  const bin = findBinDir();
  if (!bin) throw new Error('initdb/pg_ctl not found on PATH or under /usr/lib/postgresql');
  const root = mkdtempSync(join(tmpdir(), 'tg-pg-'));
  const dataDir = join(root, 'data');
  const sockDir = join(root, 'sock');
  mkdirSync(sockDir);
  const logFile = join(root, 'server.log');
  const asRoot = isRoot();
  if (asRoot) {
    const uid = Number(spawnSync('id', ['-u', 'postgres']).stdout.toString().trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres']).stdout.toString().trim());
    chownSync(root, uid, gid);
    chownSync(sockDir, uid, gid);
  }
  const cmd = (tool: string, args: string[]): [string, string[]] => (asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args]);
  const exec = async (tool: string, args: string[], timeout = 60_000) => {
    const [file, argv] = cmd(tool, args);
    try {
      return await run(file, argv, { timeout, cwd: root });
    } catch (err) {
      const e = err as Error & { stdout?: string; stderr?: string };
      throw new Error(`${tool} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}\n${readLog()}`);
    }
  };
  const readLog = () => {
    try {
      return spawnSync('cat', [logFile]).stdout.toString();
    } catch {
      return '';
    }
  };

  await exec('initdb', ['-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C', '-D', dataDir]);
  const port = await freePort();
  const settings: Record<string, string> = { fsync: opts.fsync ? 'on' : 'off', full_page_writes: opts.fsync ? 'on' : 'off', max_connections: '200', ...opts.settings };
  const serverOpts = [`-p ${port}`, `-k ${sockDir}`, '-c listen_addresses=127.0.0.1', ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
  const start = async () => {
    await exec('pg_ctl', ['start', '-w', '-t', '60', '-D', dataDir, '-l', logFile, '-o', serverOpts]);
  };
  let destroyed = false;
  /** The postmaster and its children (first line of postmaster.pid; children by parent pid). */
  const serverPids = (): number[] => {
    let main: number;
    try {
      main = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return [];
    }
    const kids = spawnSync('pgrep', ['-P', String(main)])
      .stdout.toString()
      .split('\n')
      .filter(Boolean)
      .map(Number);
    return [main, ...kids];
  };
  const signalAll = (sig: NodeJS.Signals) => {
    for (const pid of serverPids()) {
      try {
        process.kill(pid, sig);
      } catch {
        /* exited meanwhile */
      }
    }
  };
  const killNow = () => {
    signalAll('SIGCONT'); // a frozen server would not act on the stop
    const [file, argv] = cmd('pg_ctl', ['stop', '-m', 'immediate', '-D', dataDir]);
    spawnSync(file, argv, { stdio: 'ignore', timeout: 10_000 });
  };
  installExitHook();
  live.add(killNow);
  try {
    await start();
  } catch (err) {
    live.delete(killNow);
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    start,
    async stop(mode = 'fast') {
      await exec('pg_ctl', ['stop', '-w', '-t', '60', '-m', mode, '-D', dataDir]);
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      live.delete(killNow);
      killNow();
      rmSync(root, { recursive: true, force: true });
    },
    async signal(sig) {
      signalAll(sig);
    },
    log: readLog,
  };
}
