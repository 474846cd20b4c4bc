// Browser plumbing of the hosted-checkout tests: Debian chromium through playwright-core, a test
// EIP-1193/EIP-6963 wallet backed by an unlocked anvil account, axe-core checks, screenshots.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page, type Request } from 'playwright-core';
import { rpcRequest, type DevChain } from '@tollgate/devchain';
import { env } from '../helpers/env.ts';

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Why the browser tests cannot run, or undefined when they can. With TOLLGATE_TEST_STRICT=1 (CI) a
 * missing browser is a failure: the caller throws instead of skipping.
 */
export function browserUnavailable(): string | undefined {
  if (existsSync(env.CHROMIUM_PATH)) return undefined;
  const why = `chromium not found at ${env.CHROMIUM_PATH} (apt-get install chromium)`;
  if (env.TOLLGATE_TEST_STRICT === '1') throw new Error(`TOLLGATE_TEST_STRICT=1 but ${why}`);
  return why;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: env.CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '../../../../test-artifacts/checkout');

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const AXE_SOURCE = readFileSync(AXE_PATH, 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * Runs axe-core on the page and returns the serious and critical violations. The page's CSP
 * (script-src 'self') refuses an injected <script> tag, so axe is evaluated through the DevTools
 * protocol, which CSP does not govern; the page itself stays under its real policy.
 */
export async function axeSerious(page: Page): Promise<AxeViolation[]> {
  // Once per document: sending and compiling the 0.5-MB source costs more than a scan (measured).
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    return axe.run(document, { resultTypes: ['violations'] });
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, ...(n.failureSummary ? { failureSummary: n.failureSummary } : {}) })) }));
}

/** Records CSP violations, every request of a context and the 404 answers. */
export async function watchPage(context: BrowserContext) {
  const requests: string[] = [];
  /** URLs answered 404 (a missing icon or asset shows up here) */
  const notFound: string[] = [];
  context.on('request', (r) => requests.push(r.url()));
  context.on('response', (r) => {
    if (r.status() === 404) notFound.push(r.url());
  });
  await context.addInitScript(`window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`);
  return {
    requests,
    notFound,
    cspViolations: (page: Page) => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp),
  };
}

/** Serves the merchant's https logo from memory: the test machine makes no external request. */
export async function routeLogo(context: BrowserContext, url: string): Promise<void> {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 48 48"><rect width="48" height="48" rx="10" fill="#6b3e26"/><path d="M14 18h16v10a8 8 0 0 1-16 0zM30 20h3a4 4 0 0 1 0 8h-3" fill="none" stroke="#fff" stroke-width="3"/></svg>';
  await context.route(url, (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: svg }));
}

/**
 * Holds the page's navigation to `pathname` (the merchant's return URL, which the completed screen
 * opens by itself 2.5 s after it shows) until `release()`: the checks of the completed screen (its
 * receipt, a screenshot, axe) then run on that screen however slow the machine is. The old document
 * stays live while the navigation's request waits.
 */
export async function holdNavigation(page: Page, pathname: string): Promise<() => void> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route(
    (u) => u.pathname === pathname,
    async (route) => {
      await held;
      await route.continue();
    },
  );
  return release;
}

/**
 * The page's requests whose path ends with `suffix` from now on (its status polls): `issued(n)`
 * resolves once n of them were sent and every one sent so far was answered. A page polls again only
 * after handling the previous answer, so n issued means n − 1 answers handled: the wait for "the page
 * polled and showed nothing new" that a sleep only hoped for.
 */
export function pageRequests(page: Page, suffix: string) {
  let sent = 0;
  let done = 0;
  let wake = () => {};
  const onRequest = (r: Request) => {
    if (new URL(r.url()).pathname.endsWith(suffix)) {
      sent++;
      pending.add(r);
    }
  };
  const pending = new Set<Request>();
  const onDone = (r: Request) => {
    if (pending.delete(r)) {
      done++;
      wake();
    }
  };
  page.on('request', onRequest);
  page.on('requestfinished', onDone);
  page.on('requestfailed', onDone);
  return {
    async issued(n: number, timeoutMs = 15_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      try {
        while (sent < n || done < sent) {
          if (Date.now() > deadline) throw new Error(`${sent} of ${n} requests to …${suffix} sent (${done} answered) in ${timeoutMs} ms`);
          await new Promise<void>((r) => {
            wake = r;
            setTimeout(r, 100);
          });
        }
      } finally {
        page.off('request', onRequest);
        page.off('requestfinished', onDone);
        page.off('requestfailed', onDone);
      }
    },
  };
}

/** No serious or critical axe-core violation on the page (`screen` names it in the failure). */
export async function assertAxeClean(page: Page, screen: string): Promise<void> {
  const v = await axeSerious(page);
  assert.deepEqual(v, [], `axe serious/critical violations on ${screen}: ${JSON.stringify(v, null, 1)}`);
}

/**
 * A browser context for a hosted payment page at `viewport` (`mobile`: touch, 2× pixels), kept in
 * `contexts` for the caller to close: the page's copy buttons may write the clipboard (the tests
 * read it back) and the merchant's logo is served from memory (routeLogo).
 */
export async function pageContext(browser: Browser, contexts: BrowserContext[], site: { origin: string; logoUrl: string }, viewport: { width: number; height: number }, mobile = false): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport, ...(mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}) });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.origin });
  contexts.push(context);
  await routeLogo(context, site.logoUrl);
  return context;
}

/** The page side of the test wallet (plain ES2020, runs before the page's own script). */
const WALLET_SHIM = `(() => {
  const provider = {
    async request(args) {
      const r = await window.__walletRpc(args.method, args.params ?? []);
      if (r.error) throw Object.assign(new Error(r.error.message), { code: r.error.code });
      return r.result;
    },
    on() {},
    removeListener() {},
  };
  const refusing = { request: () => Promise.reject(Object.assign(new Error('User rejected'), { code: 4001 })) };
  const icon = 'data:image/svg+xml,%3Csvg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"%3E%3Ccircle cx="12" cy="12" r="11" fill="%231d4ed8"/%3E%3C/svg%3E';
  const wallets = [
    { info: { uuid: '6f7a1c1e-0000-4000-8000-000000000001', name: 'Test Wallet', icon, rdns: 'dev.tollgate.testwallet' }, provider },
    { info: { uuid: '6f7a1c1e-0000-4000-8000-000000000002', name: 'Other Wallet', icon, rdns: 'dev.tollgate.other' }, provider: refusing },
  ];
  const announce = () => {
    for (const w of wallets) window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: Object.freeze(w) }));
  };
  window.addEventListener('eip6963:requestProvider', announce);
  announce();
  window.ethereum = provider;
})();`;

export interface WalletLog {
  calls: { method: string; params: unknown }[];
  sent: { from: string; to: string; data: string; hash: string }[];
}

/**
 * Injects a test wallet into every page of `context`: an EIP-1193 provider announced through
 * EIP-6963 (next to a second wallet that refuses everything, so the page must let the payer pick)
 * and set as window.ethereum. Its `request` goes to Node, which answers for anvil account `payer`
 * (unlocked: anvil signs `eth_sendTransaction` itself). The wallet starts on chain 1, so the page
 * must switch it to the checkout's chain.
 */
export async function installWallet(context: BrowserContext, dev: DevChain, payer: string): Promise<WalletLog> {
  const log: WalletLog = { calls: [], sent: [] };
  let chainId = 1;
  await context.exposeFunction('__walletRpc', async (method: string, params: unknown[]) => {
    log.calls.push({ method, params });
    const fail = (code: number, message: string) => ({ error: { code, message } });
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return { result: [payer] };
      case 'eth_chainId':
        return { result: `0x${chainId.toString(16)}` };
      case 'wallet_switchEthereumChain': {
        const want = Number.parseInt((params as [{ chainId: string }])[0].chainId, 16);
        if (want !== dev.chainId) return fail(4902, `Unrecognized chain ID ${want}`);
        chainId = want;
        return { result: null };
      }
      case 'eth_sendTransaction': {
        if (chainId !== dev.chainId) return fail(-32603, 'wrong chain');
        const tx = (params as [{ from: string; to: string; data: string }])[0];
        if (tx.from.toLowerCase() !== payer.toLowerCase()) return fail(4100, 'unknown account');
        const hash = await rpcRequest<string>(dev.rpcUrl, 'eth_sendTransaction', [tx]);
        log.sent.push({ ...tx, hash });
        return { result: hash };
      }
      default:
        return fail(4200, `unsupported method ${method}`);
    }
  });
  // A string, not a function: tsx compiles test files with esbuild's keepNames, whose `__name(…)`
  // helper calls would be serialized into the page, where `__name` does not exist.
  await context.addInitScript(WALLET_SHIM);
  return log;
}
