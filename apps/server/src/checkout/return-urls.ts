/**
 * The merchant return-URL allowlist (`merchants.return_urls`) and the match of a session's
 * `success_url` / `cancel_url` against it. Pure; used by session creation and by the admin route
 * that replaces the allowlist.
 *
 * Match rule: same origin (scheme, host, port — as the WHATWG URL parser normalizes them) and the
 * allowlisted path is a prefix of the URL's path AT A SEGMENT BOUNDARY: `https://shop.example/thanks`
 * allows `/thanks`, `/thanks/`, `/thanks/order?id=7`, but not `/thanks-evil` — a plain string prefix
 * would let anyone who can publish a page named `/thanks…` on that origin receive the payer. Query
 * and fragment of the return URL are free (merchants add their own reference); the allowlist entry's
 * own query or fragment is ignored.
 */

export const MAX_RETURN_URLS = 20;
export const MAX_RETURN_URL_LENGTH = 2000;

interface AllowedReturnUrl {
  origin: string;
  path: string;
}

/** Why a URL cannot be used as a return URL or an allowlist entry, or undefined when it can. */
export function returnUrlProblem(raw: string): string | undefined {
  if (raw.length > MAX_RETURN_URL_LENGTH) return `is longer than ${MAX_RETURN_URL_LENGTH} characters`;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'is not an absolute URL';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'must be an http(s) URL';
  // Credentials in a redirect target are either a phishing trick or a leaked secret.
  if (u.username || u.password) return 'must not contain credentials';
  return undefined;
}

/** Parses an allowlist entry; undefined for an unusable entry (it then matches nothing). */
function parseAllowlistEntry(raw: string): AllowedReturnUrl | undefined {
  if (returnUrlProblem(raw)) return undefined;
  const u = new URL(raw);
  return { origin: u.origin, path: u.pathname || '/' };
}

/**
 * Whether `url` is allowed by `allowlist` (see the module comment for the rule).
 *
 * @example
 * isReturnUrlAllowed('https://shop.example/thanks/7?x=1', ['https://shop.example/thanks']) // => true
 * isReturnUrlAllowed('https://shop.example/thanks-evil', ['https://shop.example/thanks'])  // => false
 * isReturnUrlAllowed('http://shop.example/thanks', ['https://shop.example/thanks'])        // => false
 */
export function isReturnUrlAllowed(url: string, allowlist: readonly string[]): boolean {
  if (returnUrlProblem(url)) return false;
  const u = new URL(url);
  return allowlist.some((raw) => {
    const e = parseAllowlistEntry(raw);
    if (!e || e.origin !== u.origin) return false;
    if (u.pathname === e.path || e.path === '/') return true;
    const base = e.path.endsWith('/') ? e.path : `${e.path}/`;
    return u.pathname.startsWith(base);
  });
}
