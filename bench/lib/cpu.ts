import { readdirSync, readFileSync } from 'node:fs';

/** CPU time (ms) used so far by each component of a benchmark: Tollgate, Postgres, this process. */
export interface CpuSnapshot {
  server: number;
  postgres: number;
  bench: number;
  /**
   * The server's write-class system calls (/proc/<pid>/io `syscw`) per request: each query sent
   * to Postgres (one writev), each response, and the eventfd wake-ups between the process's own
   * threads (V8's GC helpers, libuv). A rough count of round trips, not an exact one. Profiles put
   * 20–50 % of the API process's CPU in `writev`, mostly the queries' (a write to a loopback
   * socket also pays for waking the Postgres backend): round trips, more than bytes, cost.
   */
  serverWrites: number;
}

/** A snapshot plus each postgres process's own time, so backends that come and go are counted right. */
export interface CpuReading extends CpuSnapshot {
  postgresByPid: Map<string, number>;
}

// Linux reports utime + stime in clock ticks; 100 per second on every kernel these machines run.
const TICK_MS = 10;

function writesOf(pid: number): number {
  try {
    return Number(/^syscw: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function ticksOf(pid: number | string): { comm: string; ms: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = s.lastIndexOf(')');
    const f = s.slice(close + 2).split(' ');
    return { comm: s.slice(s.indexOf('(') + 1, close), ms: (Number(f[11]) + Number(f[12])) * TICK_MS };
  } catch {
    return undefined; // exited between listing and reading, or not Linux
  }
}

/**
 * Reads /proc: the server's CPU, every `postgres` process's (backends, WAL writer, checkpointer:
 * all of it is the database's work), and this process's own (load generator, or the pg client of
 * the raw insert). A backend that exits between two readings loses its share (an idle pool
 * connection closing, say); one that starts counts from zero.
 */
export function cpuSnapshot(serverPid: number | undefined, database?: string): CpuReading {
  const postgresByPid = new Map<string, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const t = ticksOf(d);
    if (t?.comm === 'postgres' && (database === undefined || servesDatabase(d, database))) postgresByPid.set(d, t.ms);
  }
  const self = process.cpuUsage();
  return {
    server: serverPid === undefined ? 0 : (ticksOf(serverPid)?.ms ?? 0),
    serverWrites: serverPid === undefined ? 0 : writesOf(serverPid),
    postgres: [...postgresByPid.values()].reduce((x, y) => x + y, 0),
    bench: (self.user + self.system) / 1000,
    postgresByPid,
  };
}

/**
 * Whether a postgres process works for `database`: its backends and autovacuum workers (their
 * process title names the database), and the cluster's shared processes (WAL writer,
 * checkpointer…), but not the backends of other databases: other sessions' tests on the same
 * cluster would otherwise count as this benchmark's database work.
 */
function servesDatabase(pid: string, database: string): boolean {
  let title: string;
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return false;
  }
  if (title.includes(` ${database} `) || title.trimEnd().endsWith(` ${database}`)) return true;
  // A client backend's title is "postgres: <cluster>: <user> <database> <host>(<port>) <state>";
  // an autovacuum worker's ends with its database.
  return !/\(\d+\)/.test(title) && !/autovacuum worker \S/.test(title);
}

/** CPU ms used so far by every process named `comm` (e.g. `anvil`). */
export function cpuOfProcesses(comm: string): number {
  let ms = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const t = ticksOf(d);
    if (t?.comm === comm) ms += t.ms;
  }
  return ms;
}

/** CPU µs per request of each component between two readings. */
export function cpuPerRequest(a: CpuReading, b: CpuReading, requests: number): CpuSnapshot {
  let postgres = 0;
  for (const [pid, ms] of b.postgresByPid) postgres += ms - (a.postgresByPid.get(pid) ?? 0);
  const per = (ms: number) => (ms * 1000) / Math.max(1, requests);
  return { server: per(b.server - a.server), postgres: per(postgres), bench: per(b.bench - a.bench), serverWrites: (b.serverWrites - a.serverWrites) / Math.max(1, requests) };
}
