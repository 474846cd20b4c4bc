import http from 'node:http';
import https from 'node:https';
import { RESPONSE_BODY_LIMIT_BYTES } from './limits.ts';
import { AddressNotAllowedError, literalHostError, publicOnlyLookup, type Environment } from './url-policy.ts';

export interface SendResult {
  /** HTTP status, or null when no response arrived (timeout, network error, refused address). */
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** The first KiB of the response body (UTF-8, NUL bytes removed: Postgres text cannot hold them). */
  responseBody: string | null;
}

/** Beyond this much body the response is cut off: reading a huge body only to discard it is a DoS on us. */
const MAX_DRAIN_BYTES = 64 * 1024;

/**
 * Keep-alive HTTP(S) agents for webhook deliveries. Keep-alive is most of the throughput against
 * one receiver (no TCP/TLS handshake per delivery). In production every connect goes through
 * {@link publicOnlyLookup}: a hostname that now resolves to a private address is refused at
 * connect time, whatever it resolved to when the endpoint was created.
 */
export class DeliveryAgents {
  readonly http: http.Agent;
  readonly https: https.Agent;
  readonly environment: Environment;

  constructor(environment: Environment, maxSocketsPerHost = 128) {
    this.environment = environment;
    const opts = {
      keepAlive: true,
      maxSockets: maxSocketsPerHost,
      maxFreeSockets: maxSocketsPerHost,
      // Drop idle sockets well before typical receiver idle timeouts (nginx 75 s, node 5 s) to avoid
      // writing into a socket the peer is closing.
      timeout: 4_000,
      scheduling: 'lifo' as const,
      ...(environment === 'production' ? { lookup: publicOnlyLookup() } : {}),
    };
    this.http = new http.Agent(opts);
    this.https = new https.Agent(opts);
  }

  destroy(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

/**
 * POSTs one delivery and reports what happened; never throws. A response counts only when it is
 * complete within `timeoutMs` (headers and body): a receiver that answers 200 and then hangs has
 * not acknowledged anything we can rely on.
 */
export function postDelivery(agents: DeliveryAgents, url: string, headers: Record<string, string>, body: string, timeoutMs: number, signal?: AbortSignal): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const done = (r: Omit<SendResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve({ ...r, latencyMs: elapsed() });
    };
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve({ statusCode: null, latencyMs: 0, error: 'invalid endpoint URL', responseBody: null });
    }
    const refused = literalHostError(u, agents.environment);
    if (refused) return resolve({ statusCode: null, latencyMs: 0, error: refused.message, responseBody: null });

    const payload = Buffer.from(body, 'utf8');
    const isHttps = u.protocol === 'https:';
    const req = (isHttps ? https : http).request(u, {
      method: 'POST',
      agent: isHttps ? agents.https : agents.http,
      headers: { ...headers, 'Content-Length': String(payload.length), 'User-Agent': 'Tollgate-Webhooks/1' },
    });
    const fail = (error: string) => {
      if (settled) return; // e.g. 'close' after a complete response: the socket goes back to the pool
      done({ statusCode: null, error: clean(error), responseBody: null });
      req.destroy();
    };
    const timer = setTimeout(() => fail(`timeout: no complete response within ${timeoutMs} ms`), timeoutMs);
    const onAbort = () => fail('aborted: dispatcher stopping');
    signal?.addEventListener('abort', onAbort, { once: true });

    req.on('error', (err: NodeJS.ErrnoException) => {
      fail(err instanceof AddressNotAllowedError ? err.message : `${err.code ?? 'error'}: ${err.message}`);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      let seen = 0;
      res.on('data', (c: Buffer) => {
        seen += c.length;
        if (kept < RESPONSE_BODY_LIMIT_BYTES) {
          const part = c.subarray(0, RESPONSE_BODY_LIMIT_BYTES - kept);
          chunks.push(part);
          kept += part.length;
        }
        if (seen > MAX_DRAIN_BYTES) res.destroy();
      });
      const finish = () => {
        const text = kept > 0 ? clean(Buffer.concat(chunks).toString('utf8')) : null;
        done({ statusCode: res.statusCode ?? null, error: null, responseBody: text });
      };
      res.on('end', finish);
      // A body we cut off (too large) still carries its status; a connection lost mid-body does not.
      const closed = () => (seen > MAX_DRAIN_BYTES ? finish() : fail('connection closed before the response was complete'));
      res.on('close', closed);
      res.on('error', closed);
    });
    req.end(payload);
  });
}

/** Postgres text refuses NUL; error messages and bodies are stored as text. */
function clean(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what PostgreSQL text cannot store
  return s.replace(/\u0000/g, '');
}
