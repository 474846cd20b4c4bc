import ipaddr from 'ipaddr.js';

/**
 * Classifies IP addresses for the SSRF rule of webhook endpoints: in production a delivery may
 * only connect to a public unicast address. Pure (no DNS); `url-policy.ts` applies it at endpoint
 * creation and, through a custom `lookup`, at every connect (DNS rebinding). Parsing and range
 * matching are ipaddr.js's (the parser fastify's proxy-addr uses); the ranges are ours.
 *
 * Addresses that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`,
 * NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address inside: the kernel or a
 * translator may route them to it, so `::ffff:127.0.0.1` is loopback.
 */
export type AddressClass = 'public' | 'unspecified' | 'loopback' | 'private' | 'shared' | 'link_local' | 'unique_local' | 'multicast' | 'reserved' | 'invalid';

type Table<A> = [range: [A, number], cls: AddressClass][];

const V4: Table<ipaddr.IPv4> = (
  [
    ['0.0.0.0/8', 'unspecified'],
    ['127.0.0.0/8', 'loopback'],
    ['10.0.0.0/8', 'private'],
    ['172.16.0.0/12', 'private'],
    ['192.168.0.0/16', 'private'],
    ['100.64.0.0/10', 'shared'],
    ['169.254.0.0/16', 'link_local'],
    ['224.0.0.0/4', 'multicast'],
    // 240/4 (incl. broadcast), IETF protocol assignments, documentation nets, benchmarking.
    ['240.0.0.0/4', 'reserved'],
    ['192.0.0.0/24', 'reserved'],
    ['192.0.2.0/24', 'reserved'],
    ['198.51.100.0/24', 'reserved'],
    ['203.0.113.0/24', 'reserved'],
    ['198.18.0.0/15', 'reserved'],
  ] as const
).map(([cidr, cls]) => [ipaddr.IPv4.parseCIDR(cidr), cls]);

const V6: Table<ipaddr.IPv6> = (
  [
    ['64:ff9b:1::/48', 'private'], // local-use NAT64 (RFC 8215)
    ['fc00::/7', 'unique_local'],
    ['fe80::/10', 'link_local'],
    ['fec0::/10', 'private'], // deprecated site-local
    ['ff00::/8', 'multicast'],
    ['2001:db8::/32', 'reserved'], // documentation
    ['2001::/32', 'reserved'], // Teredo tunnels to an obfuscated IPv4
  ] as const
).map(([cidr, cls]) => [ipaddr.IPv6.parseCIDR(cidr), cls]);

/** The ranges whose addresses carry an IPv4 address, and where (bit offset of its 32 bits). */
const EMBEDS_V4: [range: [ipaddr.IPv6, number], at: number][] = (
  [
    ['::ffff:0:0/96', 96], // IPv4-mapped
    ['::/96', 96], // IPv4-compatible (:: and ::1 are matched before)
    ['64:ff9b::/96', 96], // NAT64
    ['2002::/16', 16], // 6to4: bits 16..47
  ] as const
).map(([cidr, at]) => [ipaddr.IPv6.parseCIDR(cidr), at]);

function classifyV4(a: ipaddr.IPv4): AddressClass {
  return V4.find(([range]) => a.match(range))?.[1] ?? 'public';
}

function classifyV6(a: ipaddr.IPv6): AddressClass {
  const g = a.parts;
  if (g.every((x) => x === 0)) return 'unspecified';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'loopback';
  for (const [range, at] of EMBEDS_V4) {
    if (!a.match(range)) continue;
    const i = at / 16;
    return classifyV4(new ipaddr.IPv4([g[i]! >> 8, g[i]! & 0xff, g[i + 1]! >> 8, g[i + 1]! & 0xff]));
  }
  const cls = V6.find(([range]) => a.match(range))?.[1];
  if (cls) return cls;
  // Only global unicast (2000::/3) is public; everything else is unassigned or special.
  return (g[0]! & 0xe000) === 0x2000 ? 'public' : 'reserved';
}

/** IPv6 text (optionally `[…]`, zone id ignored, strict dotted-quad IPv4 tail) → eight 16-bit groups. */
export function parseIPv6(input: string): number[] | undefined {
  const s = (input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input).replace(/%.*$/, '');
  if (!s.includes(':') || !ipaddr.IPv6.isValid(s)) return undefined;
  if (s.includes('.') && !ipaddr.IPv4.isValidFourPartDecimal(s.slice(s.lastIndexOf(':') + 1))) return undefined;
  return ipaddr.IPv6.parse(s).parts;
}

/**
 * @example classifyAddress('8.8.8.8') // => 'public'
 * @example classifyAddress('::ffff:10.0.0.1') // => 'private'
 * @example classifyAddress('fe80::1%eth0') // => 'link_local'
 */
export function classifyAddress(ip: string): AddressClass {
  // Strict dotted quad only: no `127.1`, hex or octal forms (the WHATWG URL parser normalizes those first).
  if (ipaddr.IPv4.isValidFourPartDecimal(ip)) return classifyV4(ipaddr.IPv4.parse(ip));
  const v6 = parseIPv6(ip);
  return v6 ? classifyV6(new ipaddr.IPv6(v6)) : 'invalid';
}

/** Whether a production webhook may connect to `ip`. */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === 'public';
}
