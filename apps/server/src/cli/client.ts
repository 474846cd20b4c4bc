/** A thin HTTP client of the admin API for the CLI. */
export class AdminClient {
  private readonly baseUrl: string;
  private readonly token: string | undefined;
  constructor(baseUrl: string, token: string | undefined) {
    this.baseUrl = baseUrl;
    this.token = token;
  }

  async call(method: string, path: string, body?: unknown): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(this.baseUrl + path, {
        method,
        headers: {
          ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (err) {
      throw new CliError(`cannot reach Tollgate at ${this.baseUrl}: ${(err as Error).cause ?? (err as Error).message}. Is it running? (set TOLLGATE_URL)`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = text;
    }
    if (!res.ok) {
      const e = json as { error?: string; code?: string; param?: string };
      // The usual cause of a 401 here: no token found (no ADMIN_TOKEN, no dev-profile token file).
      const hint = res.status === 401 && !this.token ? '\nno admin token: set ADMIN_TOKEN, or run from the folder (or a subfolder) where `npm start` keeps .tollgate/' : '';
      throw new CliError(`${res.status} ${e?.code ?? ''}: ${e?.error ?? text}${e?.param ? ` (param: ${e.param})` : ''}${hint}`, json);
    }
    return json;
  }
}

export class CliError extends Error {
  readonly body?: unknown;
  constructor(message: string, body?: unknown) {
    super(message);
    this.body = body;
  }
}
