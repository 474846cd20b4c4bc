// Starts and stops anvil processes. The binary ships inside the npm package @foundry-rs/anvil (in a
// per-platform optional dependency), so there is no download and no foundryup.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import type { Address, Hex } from 'viem';
import { rpcRequest } from './rpc.ts';

/** A funded dev account: anvil gives each 10,000 ETH. */
export interface DevAccount {
  address: Address;
  privateKey: Hex;
}

export interface StartAnvilOptions {
  /**
   * TCP port; 0 (default) lets the OS pick a free one, read back from anvil's banner. Avoid the
   * ports fetch refuses (1, 6000, 10080, …): viem and the readiness probe speak HTTP through fetch.
   */
  port?: number;
  /** Default 31337 (anvil's own default). */
  chainId?: number;
  /** Seconds between blocks (interval mining). Absent: automine, one block per transaction. */
  blockTime?: number;
  /** Interface to bind. Default 127.0.0.1: a dev chain with funded keys must not face a network. */
  host?: string;
  /**
   * Start anvil in its own process group. A terminal's Ctrl-C signals the whole foreground group;
   * a parent that handles signals and stops the chain after its own work (`tollgate serve`) wants
   * anvil to outlive that signal until `stop()`, or its in-flight requests fail during shutdown.
   * Default false: anvil then dies with the group, which suits scripts and tests.
   */
  ownProcessGroup?: boolean;
}

export interface AnvilHandle {
  rpcUrl: string;
  port: number;
  chainId: number;
  /** The 10 default anvil accounts (mnemonic "test test … junk"), index 0 first. */
  accounts: readonly DevAccount[];
  /** Kills anvil and resolves once the process has exited (its port is free again). */
  stop(): Promise<void>;
}

/**
 * The accounts anvil derives from its default mnemonic "test test test test test test test test
 * test test test junk" at m/44'/60'/0'/0/i. Listed rather than derived: BIP-39 derivation costs
 * more than the whole anvil start (~0.1 s), and these keys are public knowledge.
 */
export const DEFAULT_ANVIL_ACCOUNTS: readonly DevAccount[] = Object.freeze([
  { address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' },
  { address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' },
  { address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', privateKey: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a' },
  { address: '0x90F79bf6EB2c4f870365E785982E1f101E93b906', privateKey: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6' },
  { address: '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65', privateKey: '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a' },
  { address: '0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc', privateKey: '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba' },
  { address: '0x976EA74026E726554dB657fA54763abd0C3a0aa9', privateKey: '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e' },
  { address: '0x14dC79964da2C08b23698B3D3cc7Ca32193d9955', privateKey: '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356' },
  { address: '0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f', privateKey: '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97' },
  { address: '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720', privateKey: '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6' },
] as const satisfies readonly DevAccount[]);

const STARTUP_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 2_000;
/** Keep only the end of anvil's output for error messages. */
const OUTPUT_TAIL_CHARS = 4_000;

/**
 * Path of the anvil executable inside the installed @foundry-rs/anvil package.
 *
 * We run the platform binary directly instead of the package's `bin.mjs` wrapper: the wrapper is
 * a second Node process (~40 ms and ~40 MB more per chain) and only forwards SIGINT/SIGTERM, so a
 * SIGKILLed wrapper would orphan anvil and keep its port.
 *
 * @example
 * const bin = resolveAnvilBinary(); // …/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil
 */
export function resolveAnvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const platformPackage = `@foundry-rs/anvil-${process.platform}-${arch}`;
  const binaryName = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  // The platform package is an optionalDependency of @foundry-rs/anvil, so resolve it from there:
  // that also works when npm nests it under the wrapper instead of hoisting it.
  const require = createRequire(import.meta.url);
  let wrapperJson: string;
  try {
    wrapperJson = require.resolve('@foundry-rs/anvil/package.json');
  } catch (cause) {
    throw new Error('@foundry-rs/anvil is not installed (a dependency of @tollgate/devchain)', { cause });
  }
  let platformJson: string;
  try {
    platformJson = createRequire(wrapperJson).resolve(`${platformPackage}/package.json`);
  } catch (cause) {
    throw new Error(`${platformPackage} is not installed: anvil ships no binary for ${process.platform}/${process.arch}, ` + 'or optional dependencies were skipped (npm --omit=optional)', { cause });
  }
  const binary = join(dirname(platformJson), 'bin', binaryName);
  if (!existsSync(binary)) throw new Error(`anvil binary missing at ${binary}`);
  return binary;
}

// One process-wide exit hook for every live anvil (one listener per chain would trip Node's
// MaxListeners warning in a test file that starts eleven chains). Only 'exit' is hooked: signals
// belong to the application; Ctrl-C already reaches anvil because it shares our process group.
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;
function trackChild(child: ChildProcess): void {
  liveChildren.add(child);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const c of liveChildren) c.kill('SIGKILL');
    });
  }
}

/**
 * Starts a local anvil chain and resolves once it answers JSON-RPC.
 *
 * Anvil binds the port itself (port 0 → OS-chosen free port, read from its "Listening on" line),
 * so there is no pick-then-bind race between parallel test files. After start, request logging is
 * switched off over RPC (`anvil_setLoggingEnabled`): `--quiet` would also hide the port, and
 * logging every request into a pipe that a busy event loop does not drain could stall anvil.
 *
 * The child is unref'd: a forgotten handle never keeps a test process alive, and the exit hook
 * kills it. Call `stop()` anyway to free the port early.
 *
 * @example
 * const anvil = await startAnvil({ chainId: 31337 });
 * try {
 *   const client = createPublicClient({ transport: http(anvil.rpcUrl) });
 *   console.log(await client.getBlockNumber()); // 0n
 * } finally {
 *   await anvil.stop();
 * }
 */
export async function startAnvil(opts: StartAnvilOptions = {}): Promise<AnvilHandle> {
  const host = opts.host ?? '127.0.0.1';
  const chainId = opts.chainId ?? 31337;
  const requestedPort = opts.port ?? 0;
  if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) {
    throw new Error(`startAnvil: invalid port ${requestedPort}`);
  }
  // One deadline for the whole start: the "Listening on" line and the first JSON-RPC answer.
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  const args = ['--host', host, '--port', String(requestedPort), '--chain-id', String(chainId), '--accounts', '10'];
  if (opts.blockTime !== undefined) args.push('--block-time', String(opts.blockTime));

  // Empty environment: RUST_LOG or ANVIL_IP_ADDR in the caller's shell must not change what anvil
  // prints or where it binds. The binary is spawned by absolute path, so PATH is not needed.
  const child = spawn(resolveAnvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'], env: {}, detached: opts.ownProcessGroup === true });
  trackChild(child);

  // Anvil prints its banner, then "Listening on host:port" once bound, on stdout; errors go to
  // stderr. Both pipes are drained for the whole life of the process (so anvil never blocks on a
  // full pipe) into short tails that startup errors quote.
  const output = { stdout: '', stderr: '' };
  let onPort: ((port: number) => void) | undefined;
  const checkPort = (): void => {
    const m = onPort && /Listening on (\S+):(\d+)\r?\n/.exec(output.stdout);
    if (m) onPort?.(Number(m[2]));
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    output.stdout = (output.stdout + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
    checkPort();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output.stderr = (output.stderr + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  });

  let exitInfo: ExitInfo | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      liveChildren.delete(child);
      resolve();
    });
  });
  // 'close' fires after 'exit' once the pipes are flushed, so the error quotes anvil's last words.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => void fail(`no "Listening on" line within ${STARTUP_TIMEOUT_MS} ms`), STARTUP_TIMEOUT_MS);
    const onError = (err: Error): void => void fail(err.message); // e.g. EACCES on the binary
    const onClose = (): void => void fail('anvil exited during startup');
    child.once('error', onError);
    child.once('close', onClose);
    const cleanup = (): void => {
      clearTimeout(timer);
      onPort = undefined;
      child.off('error', onError);
      child.off('close', onClose);
    };
    onPort = (p) => {
      cleanup();
      resolve(p);
    };
    async function fail(reason: string): Promise<void> {
      cleanup();
      child.kill('SIGKILL');
      await Promise.race([closed, new Promise((r) => setTimeout(r, 500))]);
      reject(startupError(reason, args, output, exitInfo));
    }
    checkPort(); // the line may already be buffered
  });

  // An 'error' event without a listener would crash the host process; record it instead.
  child.on('error', (err) => {
    output.stderr = `${output.stderr}\n[child process error] ${err.message}`.slice(-OUTPUT_TAIL_CHARS);
  });
  // Unref so a forgotten handle never keeps a test process alive (the exit hook still kills it).
  (child.stdout as unknown as Socket).unref();
  (child.stderr as unknown as Socket).unref();
  child.unref();

  // A wildcard bind is reached through loopback.
  const urlHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  const rpcUrl = `http://${urlHost}:${port}`;
  try {
    const answered = await waitForChainId(rpcUrl, deadline, () => exitInfo !== undefined);
    if (answered !== chainId) throw new Error(`eth_chainId answered ${answered}, expected ${chainId}`);
    // Per-request logging would be the only steady output; with it off the pipes stay quiet.
    await rpcRequest(rpcUrl, 'anvil_setLoggingEnabled', [false]);
  } catch (err) {
    child.kill('SIGKILL');
    await Promise.race([closed, new Promise((r) => setTimeout(r, 500))]);
    throw startupError((err as Error).message, args, output, exitInfo);
  }

  let stopping: Promise<void> | undefined;
  return {
    rpcUrl,
    port,
    chainId,
    accounts: DEFAULT_ANVIL_ACCOUNTS,
    stop() {
      stopping ??= (async () => {
        if (exitInfo !== undefined) return;
        // Re-ref: otherwise `await stop()` as a script's last step could let Node exit first.
        child.ref();
        child.kill('SIGTERM');
        const grace = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(grace);
      })();
      return stopping;
    },
  };
}

/** Polls eth_chainId until it answers; anvil prints "Listening on" after binding, so ~1 try. */
async function waitForChainId(rpcUrl: string, deadline: number, hasExited: () => boolean): Promise<number> {
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error('anvil exited during startup');
    try {
      return Number(await rpcRequest<Hex>(rpcUrl, 'eth_chainId', [], { timeoutMs: 1_000 }));
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  throw new Error(`no JSON-RPC answer within ${STARTUP_TIMEOUT_MS} ms: ${String(lastError)}`);
}

interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

function startupError(reason: string, args: string[], output: { stdout: string; stderr: string }, exitInfo: ExitInfo | undefined): Error {
  const exit = exitInfo ? ` (exit code ${exitInfo.code}, signal ${exitInfo.signal})` : '';
  // stderr holds anvil's own error; without one, the last stdout lines (not the 60-line banner).
  const said = output.stderr.trim() || output.stdout.trim().split('\n').slice(-3).join('\n');
  const tail = said ? `\n--- anvil said ---\n${said}` : '';
  return new Error(`anvil failed to start: ${reason}${exit}\n  args: ${args.join(' ')}${tail}`);
}
