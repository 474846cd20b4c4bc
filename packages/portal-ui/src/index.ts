// Node side of the merchant portal: bundles the browser code with esbuild once per process and
// hands the server the page, the script and the stylesheet. No CDN, no external request: the page
// loads only these two assets and talks only to its own origin.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface PortalAssets {
  /** The page; asset URLs are relative (`assets/app.js?v=<hash>`), resolved against `/portal/`. */
  html: string;
  js: string;
  css: string;
  /** The page icon (SVG), linked from the page and also served at `/favicon.ico`. */
  favicon: string;
  /** Size of `js` gzipped (level 9): the budget is 20 KB. */
  jsGzipBytes: number;
  /** First 16 hex digits of the SHA-256 of `js` / `css`: the cache-busting query and ETag. */
  jsHash: string;
  cssHash: string;
  faviconHash: string;
}

const PKG = fileURLToPath(new URL('..', import.meta.url));
let cached: Promise<PortalAssets> | undefined;

export const contentHash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

/**
 * Builds (first call) or returns (later calls) the portal assets: the browser TypeScript
 * bundled and minified for es2020 without source maps, the CSS minified, the HTML template filled
 * with the content-hashed asset URLs. A failed build is not cached.
 *
 * @example const { html, js, css } = await buildPortalAssets();
 */
export function buildPortalAssets(): Promise<PortalAssets> {
  cached ??= doBuild().catch((err) => {
    cached = undefined;
    throw err;
  });
  return cached;
}

async function doBuild(): Promise<PortalAssets> {
  const common = { bundle: true, minify: true, write: false, sourcemap: false, logLevel: 'silent', absWorkingDir: PKG } as const;
  const [jsOut, cssOut, template, favicon] = await Promise.all([
    build({
      ...common,
      entryPoints: ['src/browser/main.ts'],
      format: 'iife',
      platform: 'browser',
      target: 'es2020',
      charset: 'utf8',
      legalComments: 'none',
      banner: { js: '/* Tollgate merchant portal */' },
    }),
    build({ ...common, entryPoints: ['src/portal.css'], target: ['chrome90', 'firefox90', 'safari14'], charset: 'utf8' }),
    readFile(new URL('../index.html', import.meta.url), 'utf8'),
    readFile(new URL('favicon.svg', import.meta.url), 'utf8'),
  ]);
  const js = jsOut.outputFiles[0]!.text;
  const css = cssOut.outputFiles[0]!.text;
  const jsHash = contentHash(js);
  const cssHash = contentHash(css);
  const faviconHash = contentHash(favicon);
  const html = template
    .replace('{{JS_URL}}', `assets/app.js?v=${jsHash}`)
    .replace('{{CSS_URL}}', `assets/app.css?v=${cssHash}`)
    .replace('{{ICON_URL}}', `assets/favicon.svg?v=${faviconHash}`);
  return { html, js, css, favicon, jsGzipBytes: gzipSync(js, { level: 9 }).length, jsHash, cssHash, faviconHash };
}
