// A small local HTTP server (node:http on 127.0.0.1:0) that records every request it receives
// (method, path, headers, exact body bytes) and answers through a scripted handler. Used to test
// request shaping and the retry / unknown-outcome rules without the real server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** The exact body bytes received, as UTF-8 text. */
  body: string;
  /** ms since the recorder started. */
  at: number;
}

/** Answers request number `n` (1-based). May leave `res` unanswered or destroy the socket. */
export type Handler = (req: Recorded, res: http.ServerResponse, n: number) => void;

export interface Recorder {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

/** Writes a JSON response. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

export async function startRecorder(handler: Handler): Promise<Recorder> {
  const t0 = Date.now();
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec: Recorded = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() - t0 };
      requests.push(rec);
      handler(rec, res, requests.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
