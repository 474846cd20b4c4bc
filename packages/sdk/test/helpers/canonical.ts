// An independent implementation of the merchant request signature (docs/authentication.md),
// written from the contract and not from @tollgate/protocol: it starts from the bytes that were
// actually sent, so it checks the SDK's whole path (parameters → wire body → bytes → signature).
import { createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

function one(headers: IncomingHttpHeaders, name: string): string {
  const v = headers[name];
  if (typeof v !== 'string') throw new Error(`header ${name} missing or repeated`);
  return v;
}

/** The canonical string of a request: decoded query, then top-level body fields, then api_key/timestamp/nonce. */
export function canonicalOf(rawBody: string, headers: IncomingHttpHeaders, query: Record<string, string> = {}): string {
  const params = new Map<string, string>(Object.entries(query));
  const body = rawBody === '' ? {} : (JSON.parse(rawBody) as Record<string, unknown>);
  for (const [k, v] of Object.entries(body)) {
    if (v === null) continue;
    if (typeof v === 'string') params.set(k, v);
    else if (typeof v === 'number') {
      if (!Number.isInteger(v)) throw new Error(`non-integer number in ${k}: the SDK must send decimal strings`);
      params.set(k, v.toString(10));
    } else if (typeof v === 'boolean') params.set(k, v ? 'true' : 'false');
    else throw new Error(`nested value in ${k}: the SDK must send *_json strings`);
  }
  params.set('api_key', one(headers, 'x-api-key'));
  params.set('timestamp', one(headers, 'x-timestamp'));
  params.set('nonce', one(headers, 'x-nonce'));
  params.delete('sign');
  const names = [...params.keys()].filter((k) => params.get(k) !== '');
  names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return names.map((k) => `${k}=${params.get(k)}`).join('&');
}

export function hmacHex(secret: string, canonical: string): string {
  return createHmac('sha256', secret).update(canonical, 'utf8').digest('hex');
}
