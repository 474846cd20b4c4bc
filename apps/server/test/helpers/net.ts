import { createServer } from 'node:net';

/**
 * A loopback port that was free a moment ago: the OS picks it, the probe closes it, and the caller
 * listens on it right after (a race another process wins only rarely; callers that start a server
 * on it retry on EADDRINUSE where it matters). For a server that must know its own URL before it
 * listens (PUBLIC_BASE_URL) or a child process given PORT. The one copy for every test.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
