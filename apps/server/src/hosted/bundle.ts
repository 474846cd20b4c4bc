// Serving one of the built pages (checkout, quick-pay link, portal): the HTML under its CSP and the
// assets (script, stylesheet, icon, lazily loaded chunks) with content-hash caching, ETags and gzip. The pages differ only in what they build,
// where they live and their CSP; this is the one place for how they are served.
import { gzipSync } from 'node:zlib';
import type { PageAssets } from '@tollgate/checkout-ui/page-assets';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../http/errors.ts';

export const COMMON_HEADERS = {
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export interface Asset {
  body: Buffer;
  gzip: Buffer;
  etag: string;
  hash: string;
  type: string;
}

function asset(text: string, hash: string, type: string): Asset {
  const body = Buffer.from(text, 'utf8');
  return { body, gzip: gzipSync(body, { level: 9 }), etag: `"${hash}"`, hash, type };
}

/** True when `header` (an If-None-Match value) names `etag` or `*`. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const v = t.trim().replace(/^W\//, '');
    return v === etag || v === '*';
  });
}

function acceptsGzip(req: FastifyRequest): boolean {
  const ae = req.headers['accept-encoding'];
  return typeof ae === 'string' && /\bgzip\b/.test(ae) && !/\bgzip;\s*q=0(\.0*)?\b/.test(ae);
}

export function sendAsset(req: FastifyRequest, reply: FastifyReply, a: Asset) {
  // `?v=<hash>` of the current build: the URL is immutable. Anything else: revalidate by ETag.
  const v = (req.query as Record<string, unknown> | undefined)?.v;
  reply.headers({
    ...COMMON_HEADERS,
    'cache-control': v === a.hash ? 'public, max-age=31536000, immutable' : 'public, max-age=0, must-revalidate',
    etag: a.etag,
    vary: 'Accept-Encoding',
    'cross-origin-resource-policy': 'same-origin',
  });
  if (matchesEtag(req.headers['if-none-match'], a.etag)) return reply.code(304).send();
  reply.type(a.type);
  if (acceptsGzip(req)) {
    reply.header('content-encoding', 'gzip');
    return reply.send(a.gzip);
  }
  return reply.send(a.body);
}

export interface Prepared {
  html: Buffer;
  js: Asset;
  css: Asset;
  icon: Asset;
  /** lazily loaded chunks by file name (`receipt.js`) */
  chunks: Map<string, Asset>;
}

export interface BundleRoutes {
  /** Paths answered with the page's HTML. */
  pages: readonly string[];
  /**
   * The page's Cross-Origin-Opener-Policy for a request: `same-origin` unless the page says
   * otherwise (the checkout page keeps its opener for GOAT's checkout SDK, hosted/routes.ts).
   */
  coop?: (req: FastifyRequest) => 'same-origin' | 'unsafe-none';
  /** Where `app.js`, `app.css` and `favicon.svg` are served, with a trailing slash. */
  assetsAt: string;
  csp: string;
  build(): Promise<PageAssets>;
}

/**
 * Registers a page and its assets. The bundle is built once per process, on the first request to
 * one of them: esbuild (its module and its service process beside this one) then costs nothing to a
 * gateway that never serves the page, and start-up does not wait for it. A failed build answers
 * that request with a 500 and is tried again on the next. Returns the build, for routes that serve
 * one of its assets elsewhere (`/favicon.ico`).
 *
 * @example serveBundle(app, { pages: ['/portal/'], assetsAt: '/portal/assets/', csp: PORTAL_CSP, build: buildPortalAssets });
 */
export function serveBundle(app: FastifyInstance, r: BundleRoutes): () => Promise<Prepared> {
  let prepared: Promise<Prepared> | undefined;
  const prepare = () =>
    (prepared ??= r
      .build()
      .then((built) => ({
        html: Buffer.from(built.html, 'utf8'),
        js: asset(built.js, built.jsHash, 'text/javascript; charset=utf-8'),
        css: asset(built.css, built.cssHash, 'text/css; charset=utf-8'),
        icon: asset(built.favicon, built.faviconHash, 'image/svg+xml'),
        chunks: new Map(Object.entries(built.chunks ?? {}).map(([name, c]) => [`${name}.js`, asset(c.js, c.hash, 'text/javascript; charset=utf-8')])),
      }))
      .catch((err: unknown) => {
        prepared = undefined;
        throw err;
      }));
  const hide = { schema: { hide: true } };
  for (const path of r.pages) {
    app.get(path, hide, async (req, reply) => {
      const { html } = await prepare();
      reply.headers({
        ...COMMON_HEADERS,
        'content-security-policy': r.csp,
        'cache-control': 'no-store',
        'x-frame-options': 'DENY',
        'cross-origin-opener-policy': r.coop?.(req) ?? 'same-origin',
      });
      return reply.type('text/html; charset=utf-8').send(html);
    });
  }
  app.get(`${r.assetsAt}app.js`, hide, async (req, reply) => sendAsset(req, reply, (await prepare()).js));
  app.get(`${r.assetsAt}app.css`, hide, async (req, reply) => sendAsset(req, reply, (await prepare()).css));
  app.get(`${r.assetsAt}favicon.svg`, hide, async (req, reply) => sendAsset(req, reply, (await prepare()).icon));
  // The page's lazily loaded chunks (PageSpec.chunks), by name; any other file is a 404.
  app.get(`${r.assetsAt}:file`, hide, async (req, reply) => {
    const chunk = (await prepare()).chunks.get((req.params as { file: string }).file);
    // (Not callNotFound: this route matches the path, so the 404 handler would answer 405.)
    if (!chunk) throw new AppError('not_found', 'no such route');
    return sendAsset(req, reply, chunk);
  });
  return prepare;
}
