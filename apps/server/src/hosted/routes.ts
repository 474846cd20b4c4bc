// The hosted checkout page and its two assets: plain fastify routes (HTML and static files, not API:
// hidden from the OpenAPI document). The checkout id travels in the URL fragment
// (`/checkout/pay#cs_…`), so it never reaches these routes or a server log.
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../deps.ts';

/**
 * The page's policy: only its own script and stylesheet, API calls only to this origin, images from
 * this origin, https (the merchant logo) or data: (EIP-6963 wallet icons); never framed.
 */
export const CHECKOUT_CSP = [
  "default-src 'self'",
  "img-src 'self' https: data:",
  "connect-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join('; ');

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

export function asset(text: string, hash: string, type: string): Asset {
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

interface Prepared {
  html: Buffer;
  js: Asset;
  css: Asset;
  icon: Asset;
}

/**
 * Registers `GET /checkout/pay` (the page), `GET /checkout/assets/app.js`,
 * `GET /checkout/assets/app.css`, `GET /checkout/assets/favicon.svg` and `GET /favicon.ico`. The
 * bundle is built once per process, on the first request to one of them: esbuild (its module here
 * and its service process beside this one) then costs nothing to a gateway that never serves the
 * hosted page, and start-up does not wait for it. A failed build answers that request with a 500
 * and is tried again on the next.
 *
 * @example await registerHostedPages(app, deps);
 */
export async function registerHostedPages(app: FastifyInstance, _deps: AppDeps): Promise<void> {
  let prepared: Promise<Prepared> | undefined;
  const prepare = () =>
    (prepared ??= import('@tollgate/checkout-ui')
      .then(({ buildCheckoutAssets }) => buildCheckoutAssets())
      .then((built) => ({
        html: Buffer.from(built.html, 'utf8'),
        js: asset(built.js, built.jsHash, 'text/javascript; charset=utf-8'),
        css: asset(built.css, built.cssHash, 'text/css; charset=utf-8'),
        icon: asset(built.favicon, built.faviconHash, 'image/svg+xml'),
      }))
      .catch((err: unknown) => {
        prepared = undefined;
        throw err;
      }));
  const hide = { schema: { hide: true } };

  app.get('/checkout/pay', hide, async (_req, reply) => {
    const { html } = await prepare();
    reply.headers({
      ...COMMON_HEADERS,
      'content-security-policy': CHECKOUT_CSP,
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'cross-origin-opener-policy': 'same-origin',
    });
    return reply.type('text/html; charset=utf-8').send(html);
  });
  app.get('/checkout/assets/app.js', hide, async (req, reply) => sendAsset(req, reply, (await prepare()).js));
  app.get('/checkout/assets/app.css', hide, async (req, reply) => sendAsset(req, reply, (await prepare()).css));
  app.get('/checkout/assets/favicon.svg', hide, async (req, reply) => sendAsset(req, reply, (await prepare()).icon));
  // Browsers ask for /favicon.ico on their own (e.g. for the JSON routes opened in a tab): the same
  // SVG, which every current browser accepts there, instead of a 404 in every log.
  app.get('/favicon.ico', hide, async (req, reply) => sendAsset(req, reply, (await prepare()).icon));
}
