// The one build of Tollgate's browser pages (hosted checkout, the quick-pay link page, the merchant
// portal): esbuild bundles a page's browser TypeScript and CSS once per process, the HTML template
// gets content-hashed asset URLs. No CDN, no external request: a page loads only its own assets.
// The compiled production build (scripts/build.mjs) runs these builds ahead of time instead.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

// Replaced by the production build (esbuild `define`) with the folder, relative to the compiled
// module, where it wrote every page's assets as built: a compiled gateway reads them and never loads
// esbuild (a development tool) nor the pages' sources. Undefined when running from source.
declare const TOLLGATE_PAGES_DIR: string | undefined;
const PAGES_DIR = typeof TOLLGATE_PAGES_DIR === 'string' ? TOLLGATE_PAGES_DIR : undefined;

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
  /**
   * Lazily loaded parts of the page (PageSpec.chunks), served beside `app.js` as `<name>.js`: the
   * first screen does not download code it may never show (the checkout page's budget counts `js` only).
   */
  chunks?: Record<string, { js: string; hash: string; gzipBytes: number }>;
}

export interface PageSpec {
  /** The page's name: its pre-built assets are `<name>.json` in the compiled build. */
  name: string;
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
  /**
   * Chunk name → entry (relative to `root`), each built on its own (IIFE, sharing no module at run
   * time with the page). The page's bundle gets `TOLLGATE_CHUNKS` defined as name → `<name>.js?v=<hash>`
   * (src/browser/chunk.ts loads one by name, relative to `app.js`).
   */
  chunks?: Record<string, string>;
}

export const contentHash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

/**
 * A page's asset builder: the first call builds (browser TypeScript bundled and minified for
 * es2020 without source maps, CSS minified, the template filled), later calls return the same
 * result; a failed build is not cached.
 *
 * @example export const buildCheckoutAssets = pageAssets({ name: 'checkout', root: new URL('..', import.meta.url), entry: 'src/browser/main.ts', … });
 */
export function pageAssets(spec: PageSpec): () => Promise<PageAssets> {
  let cached: Promise<PageAssets> | undefined;
  return () => {
    cached ??= (PAGES_DIR === undefined ? buildPage(spec) : readPrebuilt(PAGES_DIR, spec.name)).catch((err) => {
      cached = undefined;
      throw err;
    });
    return cached;
  };
}

async function readPrebuilt(dir: string, name: string): Promise<PageAssets> {
  return JSON.parse(await readFile(new URL(`${dir}/${name}.json`, import.meta.url), 'utf8')) as PageAssets;
}

async function buildPage(spec: PageSpec): Promise<PageAssets> {
  const { build } = await import('esbuild');
  const common = { bundle: true, minify: true, write: false, sourcemap: false, logLevel: 'silent', absWorkingDir: fileURLToPath(spec.root) } as const;
  const script = { ...common, format: 'iife', platform: 'browser', target: 'es2020', charset: 'utf8', legalComments: 'none', banner: { js: spec.banner } } as const;
  // Chunks first: the page's bundle names them with their content hash.
  const chunks: NonNullable<PageAssets['chunks']> = {};
  for (const [name, entry] of Object.entries(spec.chunks ?? {})) {
    if (!/^[a-z][a-z0-9-]*$/.test(name) || name === 'app') throw new Error(`chunk name ${name} is not a plain asset name`);
    // No licence banner: a chunk includes none of the third-party code the page's banner names.
    const js = (await build({ ...script, banner: { js: `/* Tollgate: ${name} */` }, entryPoints: [entry] })).outputFiles[0]!.text;
    chunks[name] = { js, hash: contentHash(js), gzipBytes: gzipSync(js, { level: 9 }).length };
  }
  const chunkUrls = Object.fromEntries(Object.entries(chunks).map(([name, c]) => [name, `${name}.js?v=${c.hash}`]));
  const [jsOut, cssOut, template, favicon] = await Promise.all([
    build({ ...script, entryPoints: [spec.entry], define: { TOLLGATE_CHUNKS: JSON.stringify(chunkUrls) } }),
    build({ ...common, entryPoints: [spec.stylesheet], target: ['chrome90', 'firefox90', 'safari14'], charset: 'utf8' }),
    readFile(new URL(spec.template, spec.root), 'utf8'),
    readFile(new URL(spec.favicon, spec.root), 'utf8'),
  ]);
  const js = jsOut.outputFiles[0]!.text;
  const css = cssOut.outputFiles[0]!.text;
  const [jsHash, cssHash, faviconHash] = [contentHash(js), contentHash(css), contentHash(favicon)];
  const html = template.replace('{{JS_URL}}', `${spec.assetBase}app.js?v=${jsHash}`).replace('{{CSS_URL}}', `${spec.assetBase}app.css?v=${cssHash}`).replace('{{ICON_URL}}', `${spec.assetBase}favicon.svg?v=${faviconHash}`);
  return { html, js, css, favicon, jsGzipBytes: gzipSync(js, { level: 9 }).length, jsHash, cssHash, faviconHash, ...(spec.chunks ? { chunks } : {}) };
}
