/**
 * Canonical names of machine-paid routes and requests (pure).
 *
 * `route_canonical` is `METHOD:seg:seg…` (`GET:api:data`): an upper-case HTTP method and one or more
 * path segments. `request_canonical` equals it or extends it with `:suffix` segments (a query, an
 * item id), so one price covers many concrete requests while each challenge is bound to one request.
 * Segments are printable ASCII without `:`, `/`, whitespace or quotes: the name travels inside a
 * quoted header parameter and a URL path, and must mean the same byte string everywhere.
 */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
const SEGMENT = /^[A-Za-z0-9._~!$&'()*+,;=@%-]{1,128}$/;
const MAX_CANONICAL_LENGTH = 512;

/** @example isRouteCanonical('GET:api:data') // => true; isRouteCanonical('GET') // => false */
export function isRouteCanonical(s: string): boolean {
  if (s.length > MAX_CANONICAL_LENGTH) return false;
  const [method, ...segs] = s.split(':');
  return (METHODS as readonly string[]).includes(method!) && segs.length >= 1 && segs.every((x) => SEGMENT.test(x) && !x.includes("'"));
}

/** @example requestExtendsRoute('GET:api:data:42', 'GET:api:data') // => true */
export function requestExtendsRoute(request: string, route: string): boolean {
  return isRouteCanonical(request) && (request === route || request.startsWith(route + ':'));
}
