// The one build of Tollgate's browser pages (hosted checkout, the quick-pay link page, the merchant
// portal): esbuild bundles a page's browser TypeScript and CSS once per process, the HTML template
// gets content-hashed asset URLs. No CDN, no external request: a page loads only its own assets.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface PageAssets {
  /** The page; asset URLs are relative (`<assetBase>app.js?v=<hash>`), resolved against the page's URL. */
  html: string;
  js: string;
  css: string;
  /** The page icon (SVG), linked from the page and also served at `/favicon.ico`. */
  favicon: string;
  /** Size of `js` gzipped (level 9): each page's test holds it to a budget. */
  jsGzipBytes: number;
  /** First 16 hex digits of the SHA-256 of `js` / `css`: the cache-busting query and ETag. */
  jsHash: string;
  cssHash: string;
  faviconHash: string;
}

export interface PageSpec {
  /** The package's root folder (its `package.json`'s folder) as a file URL. */
  root: URL;
  /** Paths relative to `root`. */
  entry: string;
  stylesheet: string;
  template: string;
  favicon: string;
  /** The bundle's first line (licences of what it includes). */
  banner: string;
  /** Prefix of the asset URLs in the HTML, relative to the page (`assets/` or `../assets/`). */
  assetBase: string;
}

export const contentHash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

/**
 * A page's asset builder: the first call builds (browser TypeScript bundled and minified for
 * es2020 without source maps, CSS minified, the template filled), later calls return the same
 * result; a failed build is not cached.
 *
 * @example export const buildCheckoutAssets = pageAssets({ root: new URL('..', import.meta.url), entry: 'src/browser/main.ts', … });
 */
export function pageAssets(spec: PageSpec): () => Promise<PageAssets> {
  let cached: Promise<PageAssets> | undefined;
  return () => {
    cached ??= buildPage(spec).catch((err) => {
      cached = undefined;
      throw err;
    });
    return cached;
  };
}

async function buildPage(spec: PageSpec): Promise<PageAssets> {
  const common = { bundle: true, minify: true, write: false, sourcemap: false, logLevel: 'silent', absWorkingDir: fileURLToPath(spec.root) } as const;
  const [jsOut, cssOut, template, favicon] = await Promise.all([
    build({
      ...common,
      entryPoints: [spec.entry],
      format: 'iife',
      platform: 'browser',
      target: 'es2020',
      charset: 'utf8',
      legalComments: 'none',
      banner: { js: spec.banner },
    }),
    build({ ...common, entryPoints: [spec.stylesheet], target: ['chrome90', 'firefox90', 'safari14'], charset: 'utf8' }),
    readFile(new URL(spec.template, spec.root), 'utf8'),
    readFile(new URL(spec.favicon, spec.root), 'utf8'),
  ]);
  const js = jsOut.outputFiles[0]!.text;
  const css = cssOut.outputFiles[0]!.text;
  const [jsHash, cssHash, faviconHash] = [contentHash(js), contentHash(css), contentHash(favicon)];
  const html = template
    .replace('{{JS_URL}}', `${spec.assetBase}app.js?v=${jsHash}`)
    .replace('{{CSS_URL}}', `${spec.assetBase}app.css?v=${cssHash}`)
    .replace('{{ICON_URL}}', `${spec.assetBase}favicon.svg?v=${faviconHash}`);
  return { html, js, css, favicon, jsGzipBytes: gzipSync(js, { level: 9 }).length, jsHash, cssHash, faviconHash };
}
