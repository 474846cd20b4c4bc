import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/tollgate.js', import.meta.url));

export interface TollgateProcess {
  child: ChildProcess;
  /** Everything printed so far (stdout + stderr). */
  output(): string;
  /** Resolves with the first match of `re` in the output, or rejects after `timeoutMs`. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM (or the given signal) and wait for exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs `tollgate <args>` as a child process with exactly `env` (plus PATH), the way an operator
 * would: used by tests that need a real second process (replay across processes, kill -9).
 * `bin` runs another checkout's `tollgate.js` (a benchmark comparing two versions), `node` another
 * Node binary (bench/runtime.ts: Node 20 against 24); both default to this process's.
 */
export function spawnTollgate(args: string[], env: Record<string, string>, cwd?: string, nodeArgs: string[] = [], bin = BIN, node = process.execPath): TollgateProcess {
  const child = spawn(node, [...nodeArgs, bin, ...args], {
    // NODE_COMPILE_CACHE (set by scripts/test.mjs) is the only other variable passed on: it changes
    // no behaviour, only how fast the child loads the server.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...(process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {}), ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters: (() => void)[] = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    waiters.forEach((w) => w());
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    waitFor(re, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(re);
          if (m) {
            clearTimeout(timer);
            resolve(m);
          }
        };
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${re}; output:\n${out}`)), timeoutMs);
        waiters.push(check);
        void exited.then((code) => {
          if (!out.match(re)) {
            clearTimeout(timer);
            reject(new Error(`tollgate exited (${code}) before ${re}; output:\n${out}`));
          }
        });
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * One Tollgate (`serve`) that a test kills with SIGKILL and starts again on the same database
 * (crash.test.ts). Requests wait in `currentBase()` while it is down.
 */
export class RestartingGateway {
  proc: TollgateProcess | undefined;
  /** The running incarnation's base URL; undefined while it is down. */
  base: string | undefined;
  /** Set when the test ends: waiters stop waiting. */
  halted = false;
  /** Starts that something outside the test SIGKILLed before they printed anything. */
  externalKills = 0;
  /** Pids of killed incarnations (their webhook claims are stranded until the lease ends). */
  readonly deadPids = new Set<number>();
  private readonly outputs: string[] = [];
  private readonly env: Record<string, string>;

  constructor(env: Record<string, string>) {
    this.env = env;
  }

  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const p = spawnTollgate(['serve'], this.env);
      this.proc = p;
      try {
        this.base = (await p.waitFor(/listening on (http:\/\/\S+)/, 60_000))[1]!;
        return;
      } catch (err) {
        // Seen once on the shared CI machine: a fresh process SIGKILLed by something outside this
        // test before it printed anything. That is not Tollgate failing to start (which exits with
        // a code and a message), so count it and start again; anything else fails the test.
        if (p.child.signalCode === 'SIGKILL' && p.output() === '' && attempt < 3) {
          this.externalKills++;
          console.log(`crash test: a starting tollgate (pid ${p.child.pid}) was SIGKILLed from outside with no output; starting again`);
          continue;
        }
        throw err;
      }
    }
  }

  async kill(): Promise<void> {
    const p = this.proc!;
    this.base = undefined;
    this.deadPids.add(p.child.pid!);
    await p.stop('SIGKILL');
    this.outputs.push(p.output());
  }

  /** The current base URL, waiting while the gateway is down (restarting). */
  async currentBase(): Promise<string> {
    const deadline = Date.now() + 90_000;
    while (!this.base) {
      if (this.halted) throw new Error('the test stopped');
      if (Date.now() > deadline) throw new Error('gateway did not come back in 90 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.base;
  }

  /** The output of every incarnation, the running one last. */
  allOutput(): string[] {
    return [...this.outputs, ...(this.proc ? [this.proc.output()] : [])];
  }
}
