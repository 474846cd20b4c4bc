import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { classifyAddress, isPublicAddress } from './address.ts';

/**
 * Which webhook URLs a deployment accepts (SSRF). In production an endpoint must be `https` and
 * reach only public addresses: checked once when the endpoint is created (a clear 400 for the
 * operator) and again at every connect through {@link publicOnlyLookup}, because a hostname that
 * resolved to a public address at creation can resolve to 127.0.0.1 later (DNS rebinding). The
 * test environment accepts `http` and loopback, so local receivers work.
 */
export type Environment = 'test' | 'production';

export type UrlCheck = { ok: true; url: string } | { ok: false; code: 'invalid_request' | 'webhook_url_not_allowed'; reason: string };

/** Resolves a hostname to all its addresses (injectable for tests). */
export type Resolver = (hostname: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) => (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

const MAX_URL_LENGTH = 2048;

/** `[::1]` → `::1`: URL keeps brackets around IPv6 hostnames; sockets and classifiers want none. */
const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Validates and normalizes an endpoint URL for `environment`.
 *
 * @example await checkEndpointUrl('http://127.0.0.1:3000/hooks', 'test') // => { ok: true, url: 'http://127.0.0.1:3000/hooks' }
 * @example await checkEndpointUrl('https://10.0.0.7/hooks', 'production') // => { ok: false, code: 'webhook_url_not_allowed', … }
 */
export async function checkEndpointUrl(raw: string, environment: Environment, resolve: Resolver = systemResolver): Promise<UrlCheck> {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, code: 'invalid_request', reason: `url is longer than ${MAX_URL_LENGTH} characters` };
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { ok: false, code: 'invalid_request', reason: 'url is not an absolute URL' };
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return { ok: false, code: 'invalid_request', reason: 'url must be http(s)' };
  // Credentials in a URL end up in logs and delivery listings; the endpoint secret authenticates.
  if (u.username || u.password) return { ok: false, code: 'invalid_request', reason: 'url must not contain credentials' };
  if (environment !== 'production') return { ok: true, url: u.href };

  if (u.protocol !== 'https:') return { ok: false, code: 'webhook_url_not_allowed', reason: 'production webhook URLs must use https' };
  const host = bareHost(u.hostname);
  if (isIP(host)) {
    const cls = classifyAddress(host);
    return cls === 'public' ? { ok: true, url: u.href } : { ok: false, code: 'webhook_url_not_allowed', reason: `${host} is a ${cls} address` };
  }
  const name = host.replace(/\.$/, '').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return { ok: false, code: 'webhook_url_not_allowed', reason: `${host} is loopback` };
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    return { ok: false, code: 'webhook_url_not_allowed', reason: `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})` };
  }
  const bad = addresses.find((a) => !isPublicAddress(a));
  if (addresses.length === 0 || bad !== undefined) {
    return { ok: false, code: 'webhook_url_not_allowed', reason: `${host} resolves to ${bad ?? 'nothing'}${bad ? ` (${classifyAddress(bad)})` : ''}, not a public address` };
  }
  return { ok: true, url: u.href };
}

/** The error a refused connect fails with; the dispatcher records its message on the attempt. */
export class AddressNotAllowedError extends Error {
  readonly code = 'ERR_WEBHOOK_ADDRESS_NOT_ALLOWED';
  constructor(host: string, addresses: string[]) {
    super(`refused to connect: ${host} resolves to ${addresses.map((a) => `${a} (${classifyAddress(a)})`).join(', ') || 'nothing'}, not a public address`);
  }
}

type LookupAll = (hostname: string, options: dns.LookupAllOptions, cb: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

/**
 * A `lookup` for sockets (http.Agent option) that resolves as usual but only ever hands public
 * addresses to `connect`. Node calls it with `{ all: true }` when happy-eyeballs is on (Node 20
 * default) and without it otherwise; both shapes are answered.
 *
 * Node skips `lookup` for IP-literal hosts: {@link literalHostError} covers those.
 */
export function publicOnlyLookup(base: LookupAll = dns.lookup as LookupAll): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const allowed = addresses.filter((a) => isPublicAddress(a.address));
      if (allowed.length === 0)
        return callback(
          new AddressNotAllowedError(
            hostname,
            addresses.map((a) => a.address),
          ) as NodeJS.ErrnoException,
          '',
          0,
        );
      if (options.all) return callback(null, allowed);
      return callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/** For an IP-literal URL in production: the refusal, or undefined when it may be used. */
export function literalHostError(u: URL, environment: Environment): AddressNotAllowedError | undefined {
  if (environment !== 'production') return undefined;
  const host = bareHost(u.hostname);
  if (isIP(host) && !isPublicAddress(host)) return new AddressNotAllowedError(host, [host]);
  return undefined;
}
