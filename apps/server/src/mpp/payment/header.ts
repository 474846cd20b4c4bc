/**
 * The IETF HTTP `Payment` authentication scheme, as far as Tollgate's challenges need it (pure).
 *
 * `WWW-Authenticate: Payment id="…", realm="…", method="evm", intent="charge", request="…",
 * expires="…"`: `request` is the base64url (no padding) of the canonical JSON (keys sorted, no
 * spaces: RFC 8785 for these plain string/number values) of the charge request
 * `{ amount, currency, methodDetails: { chainId, credentialTypes, decimals }, recipient }`, the
 * shape the `mppx` client's EVM method reads; `expires` is RFC 3339. The id is the challenge id, so a
 * credential that echoes the challenge names it.
 */
export interface PaymentChallenge {
  id: string;
  realm: string;
  method: string;
  intent: string;
  request: Record<string, unknown>;
  expires: string;
}

/** Canonical JSON (sorted keys) of plain JSON values. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

function quote(v: string): string {
  if (/[\r\n]/.test(v)) throw new Error('header parameter contains a line break');
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** @example serializeChallenge(c) // => 'Payment id="ch_…", realm="pay.example", method="evm", …' */
export function serializeChallenge(c: PaymentChallenge): string {
  const request = Buffer.from(canonicalJson(c.request), 'utf8').toString('base64url');
  return `Payment ${[`id=${quote(c.id)}`, `realm=${quote(c.realm)}`, `method=${quote(c.method)}`, `intent=${quote(c.intent)}`, `request=${quote(request)}`, `expires=${quote(c.expires)}`].join(', ')}`;
}

/** Parses the auth-params of a `Payment` challenge (tests and the SDK read the header back). */
export function parseChallengeParams(header: string): Record<string, string> {
  const m = /^Payment\s+(.*)$/s.exec(header.trim());
  if (!m) throw new Error('not a Payment challenge');
  const out: Record<string, string> = {};
  const re = /([A-Za-z0-9_-]+)="((?:[^"\\]|\\.)*)"\s*(?:,\s*|$)/gy;
  let p: RegExpExecArray | null;
  while ((p = re.exec(m[1]!))) out[p[1]!] = p[2]!.replace(/\\(.)/g, '$1');
  return out;
}
