/**
 * Classifies IP addresses for the SSRF rule of webhook endpoints: in production a delivery may
 * only connect to a public unicast address. Pure (no DNS); `url-policy.ts` applies it at endpoint
 * creation and, through a custom `lookup`, at every connect (DNS rebinding).
 *
 * Addresses that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`,
 * NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address inside: the kernel or a
 * translator may route them to it, so `::ffff:127.0.0.1` is loopback.
 */
export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link_local'
  | 'unique_local'
  | 'multicast'
  | 'reserved'
  | 'invalid';

/** Strict dotted-quad IPv4 → 32-bit unsigned integer. */
export function parseIPv4(s: string): number | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return undefined;
    const v = Number(p);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

/** IPv6 text (optionally `[…]`, zone id ignored, IPv4 tail allowed) → eight 16-bit groups. */
export function parseIPv6(input: string): number[] | undefined {
  let s = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  s = s.replace(/%.*$/, '');
  if (!s.includes(':') || !/^[0-9a-fA-F:.]+$/.test(s)) return undefined;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.')) {
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tail = [v4 >>> 16, v4 & 0xffff];
    // keep a trailing `::` ('::1.2.3.4'), drop a single separator ('::ffff:1.2.3.4' → '::ffff')
    const prefix = s.slice(0, lastColon + 1);
    s = prefix.endsWith('::') ? prefix : prefix.slice(0, -1);
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const group = (h: string): number[] | undefined => {
    if (h === '') return [];
    const out: number[] = [];
    for (const g of h.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = group(halves[0]!);
  const rest = halves.length === 2 ? group(halves[1]!) : [];
  if (!head || !rest) return undefined;
  const known = head.length + rest.length + tail.length;
  if (halves.length === 2) {
    if (known > 7) return undefined;
    return [...head, ...new Array<number>(8 - known).fill(0), ...rest, ...tail];
  }
  return known === 8 ? [...head, ...tail] : undefined;
}

const inV4 = (ip: number, base: string, bits: number) => {
  const b = parseIPv4(base)!;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return ((ip & mask) >>> 0) === ((b & mask) >>> 0);
};

function classifyV4(ip: number): AddressClass {
  if (inV4(ip, '0.0.0.0', 8)) return 'unspecified';
  if (inV4(ip, '127.0.0.0', 8)) return 'loopback';
  if (inV4(ip, '10.0.0.0', 8) || inV4(ip, '172.16.0.0', 12) || inV4(ip, '192.168.0.0', 16)) return 'private';
  if (inV4(ip, '100.64.0.0', 10)) return 'shared';
  if (inV4(ip, '169.254.0.0', 16)) return 'link_local';
  if (inV4(ip, '224.0.0.0', 4)) return 'multicast';
  // 240/4 (incl. broadcast), IETF protocol assignments, documentation nets, benchmarking.
  if (
    inV4(ip, '240.0.0.0', 4) ||
    inV4(ip, '192.0.0.0', 24) ||
    inV4(ip, '192.0.2.0', 24) ||
    inV4(ip, '198.51.100.0', 24) ||
    inV4(ip, '203.0.113.0', 24) ||
    inV4(ip, '198.18.0.0', 15)
  ) {
    return 'reserved';
  }
  return 'public';
}

function classifyV6(g: number[]): AddressClass {
  const [a, b, c, d, e, f, h1, h2] = g as [number, number, number, number, number, number, number, number];
  const v4 = (hi: number, lo: number) => classifyV4(((hi << 16) >>> 0) + lo);
  const zeroPrefix = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  if (zeroPrefix && f === 0 && h1 === 0 && h2 === 0) return 'unspecified';
  if (zeroPrefix && f === 0 && h1 === 0 && h2 === 1) return 'loopback';
  if (zeroPrefix && (f === 0xffff || f === 0)) return v4(h1, h2); // IPv4-mapped / IPv4-compatible
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return v4(h1, h2); // NAT64
  if (a === 0x64 && b === 0xff9b && c === 1) return 'private'; // local-use NAT64 (RFC 8215)
  if (a === 0x2002) return v4(b, c); // 6to4 embeds the IPv4 address in bits 16..47
  if ((a & 0xfe00) === 0xfc00) return 'unique_local'; // fc00::/7
  if ((a & 0xffc0) === 0xfe80) return 'link_local'; // fe80::/10
  if ((a & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((a & 0xff00) === 0xff00) return 'multicast';
  if (a === 0x2001 && b === 0x0db8) return 'reserved'; // documentation
  if (a === 0x2001 && b === 0) return 'reserved'; // Teredo tunnels to an obfuscated IPv4
  // Only global unicast (2000::/3) is public; everything else is unassigned or special.
  return (a & 0xe000) === 0x2000 ? 'public' : 'reserved';
}

/**
 * @example classifyAddress('8.8.8.8') // => 'public'
 * @example classifyAddress('::ffff:10.0.0.1') // => 'private'
 * @example classifyAddress('fe80::1%eth0') // => 'link_local'
 */
export function classifyAddress(ip: string): AddressClass {
  const v4 = parseIPv4(ip);
  if (v4 !== undefined) return classifyV4(v4);
  const v6 = parseIPv6(ip);
  if (v6 !== undefined) return classifyV6(v6);
  return 'invalid';
}

/** Whether a production webhook may connect to `ip`. */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === 'public';
}
