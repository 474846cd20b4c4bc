// The set-up the hosted-page browser files share: one stack (stack.ts) and one browser for the
// whole file, started together; the browser contexts the tests open, closed with them at the end.
import { after, before } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import type { Config } from '../../src/config/schema.ts';
import { launchBrowser, pageContext, routeLogo } from './browser.ts';
import { startStack, type Stack } from './stack.ts';

export const DESKTOP = { width: 1280, height: 900 };
export const MOBILE = { width: 375, height: 812 };

/**
 * Registers the file's `before`/`after` (call it in the describe). `stack` is there once `before`
 * ran; `newContext` opens a context for a hosted page (pageContext: clipboard, the merchant's logo
 * served from memory, and each URL of `images` too).
 */
export function hostedPageSuite(opts: { config?: Partial<Config>; images?: string[] } = {}) {
  let stack: Stack | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  before(async () => {
    [stack, browser] = await Promise.all([startStack(opts.config ? { config: opts.config } : {}), launchBrowser()]);
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await stack?.close();
  });
  return {
    get stack(): Stack {
      if (!stack) throw new Error('the stack starts in before()');
      return stack;
    },
    async newContext(viewport: { width: number; height: number } = DESKTOP, mobile = false): Promise<BrowserContext> {
      if (!stack || !browser) throw new Error('the stack starts in before()');
      const context = await pageContext(browser, contexts, { origin: new URL(stack.server.url).origin, logoUrl: stack.logoUrl }, viewport, mobile);
      for (const url of opts.images ?? []) await routeLogo(context, url);
      return context;
    },
  };
}
