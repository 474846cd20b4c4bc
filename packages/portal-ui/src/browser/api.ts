// The portal's only door to the gateway: same-origin JSON with the session cookie, and the
// session's CSRF token on every unsafe method.

export interface Session {
  role: 'operator' | 'owner' | 'developer' | 'viewer';
  email?: string;
  merchant_id?: string;
  merchant_name?: string;
  csrf_token: string;
  totp_enabled?: boolean;
  totp_enrollment_required?: boolean;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// Kept on the window, not in this module: the lazily loaded chunk (commerce.ts) bundles its own copy
// of this module, and both must send the session's one token.
const shared = window as unknown as { tollgate_csrf?: string };
export const setCsrf = (t: string) => void (shared.tollgate_csrf = t);

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = shared.tollgate_csrf ?? '';
  const res = await fetch(`/portal/api/${path}`, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) throw new ApiError(res.status, json?.code ?? 'error', json?.error ?? `HTTP ${res.status}`);
  if (json && typeof json.csrf_token === 'string') setCsrf(json.csrf_token);
  return json as T;
}

/** Query string of the defined values. */
export function qs(o: Record<string, string | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(o)) if (v) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

export const RANK = { viewer: 1, developer: 2, owner: 3, operator: 4 } as const;
export const can = (s: Session, role: keyof typeof RANK) => RANK[s.role] >= RANK[role];
