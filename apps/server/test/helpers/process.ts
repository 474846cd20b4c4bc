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
 */
export function spawnTollgate(args: string[], env: Record<string, string>, cwd?: string, nodeArgs: string[] = []): TollgateProcess {
  const child = spawn(process.execPath, [...nodeArgs, BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
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
