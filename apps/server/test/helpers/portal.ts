// A portal browser without a browser: keeps the session cookie and the CSRF token like the page does.
import type { TestResponse, TestServer } from './server.ts';

export class PortalClient {
  cookie: string | undefined;
  csrf: string | undefined;
  readonly server: TestServer;
  constructor(server: TestServer) {
    this.server = server;
  }

  /** A request with the session cookie and (on unsafe methods) the CSRF token; stores a new cookie. */
  async call<T = any>(method: string, path: string, body?: unknown, opts: { csrf?: string | null; query?: Record<string, string> } = {}): Promise<TestResponse<T>> {
    const csrf = opts.csrf === undefined ? this.csrf : opts.csrf;
    const r = await this.server.request<T>(method, path, {
      ...(body !== undefined ? { body } : {}),
      ...(opts.query ? { query: opts.query } : {}),
      headers: { ...(this.cookie ? { cookie: this.cookie } : {}), ...(csrf && method !== 'GET' ? { 'x-csrf-token': csrf } : {}) },
    });
    const set = r.headers.get('set-cookie');
    if (set) this.cookie = set.split(';')[0];
    const b = r.body as { csrf_token?: string };
    if (b && typeof b === 'object' && typeof b.csrf_token === 'string') this.csrf = b.csrf_token;
    return r;
  }

  login(email: string, password: string) {
    return this.call('POST', '/portal/api/login', { email, password });
  }

  operatorLogin(adminToken: string) {
    return this.call('POST', '/portal/api/operator/login', { admin_token: adminToken });
  }
}

/** Creates a portal user through the admin API; returns its generated password. */
export async function addPortalUser(server: TestServer, merchantId: string, email: string, role = 'owner'): Promise<string> {
  const r = await server.admin('POST', `/admin/v1/merchants/${merchantId}/portal-users`, { email, role });
  if (r.status !== 201) throw new Error(`add portal user: ${r.status} ${r.text}`);
  return r.body.password;
}
