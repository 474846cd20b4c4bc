import { spawn } from 'node:child_process';

export interface CodeBlock {
  lang: string;
  code: string;
}

/** The fenced code blocks of the `## <heading…>` section of a Markdown document, in order. */
export function codeBlocks(markdown: string, heading: string): CodeBlock[] {
  const start = markdown.search(new RegExp(`^## ${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'));
  if (start < 0) throw new Error(`no section "## ${heading}"`);
  const rest = markdown.slice(start + 3);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

export interface NpmProcess {
  output(): string;
  waitFor(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** Signals the whole process group (npm and the node it started) and waits for npm to exit. */
  stop(signal: NodeJS.Signals): Promise<number | null>;
}

/**
 * `npm <args>` as a user types it, in its own process group so a signal reaches npm and the
 * gateway it started (a terminal's Ctrl-C does the same).
 */
export function startNpm(args: string[], cwd: string, env: Record<string, string>): NpmProcess {
  return startCommand('npm', args, cwd, env);
}

/** A long-running command (its own process group), e.g. `sh -c '<a README line>'`. */
export function startCommand(cmd: string, args: string[], cwd: string, env: Record<string, string>): NpmProcess {
  const child = spawn(cmd, args, { cwd, env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of waiters) w();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    output: () => out,
    waitFor(re, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(re);
          if (!m) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(m);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${re}; output:\n${out}`));
        }, timeoutMs);
        waiters.add(check);
        void exited.then((code) => {
          if (out.match(re)) return;
          clearTimeout(timer);
          reject(new Error(`${cmd} ${args.join(' ')} exited (${code}) before ${re}; output:\n${out}`));
        });
        check();
      });
    },
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          /* already gone */
        }
      }
      return exited;
    },
  };
}
