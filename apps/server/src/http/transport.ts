import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { errorStatus, newId, type ErrorCode, type ErrorEnvelope } from '@tollgate/protocol';

/**
 * How long a request body may stall (no byte received) before the request is refused. Node's own
 * `requestTimeout` is checked only every `connectionsCheckingInterval` (30 s), so a Content-Length
 * longer than the bytes sent used to hold the connection for 30 s. A client that still sends is
 * never cut off: only silence counts.
 */
export const BODY_STALL_MS = 2_000;
const STALL_CHECK_MS = 250;

/** An error envelope written straight to the socket, then the connection is closed. */
function writeEnvelope(socket: Socket, code: ErrorCode, message: string, requestId = newId('req')): void {
  if (socket.destroyed) return;
  const status = errorStatus(code);
  const body: ErrorEnvelope = { error: message, code, request_id: requestId };
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${code.replaceAll('_', ' ')}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n` + `x-request-id: ${requestId}\r\nconnection: close\r\n\r\n${text}`);
  }
  socket.end();
  // end() lets the answer flush; a peer that never reads must not keep the socket.
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/**
 * Node's HTTP parser refuses some requests before fastify sees them: Transfer-Encoding together
 * with Content-Length (a request-smuggling shape), malformed headers, oversized headers, a request
 * that took longer than `requestTimeout`. Fastify's default answer is its own JSON shape; this gives
 * them the envelope. Logged at trace level with the parser's code only: the error object carries
 * the raw request bytes (Authorization and X-Sign included).
 */
export function onClientError(this: FastifyInstance, err: NodeJS.ErrnoException & { reason?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  this.log.trace({ err: { code: err.code, reason: typeof err.reason === 'string' ? err.reason.slice(0, 100) : undefined } }, 'client error');
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    writeEnvelope(socket, 'request_timeout', 'the request did not arrive in time');
    return;
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    writeEnvelope(socket, 'headers_too_large', 'request headers are too large');
    return;
  }
  const smuggling = err.code === 'HPE_UNEXPECTED_CONTENT_LENGTH' || err.code === 'HPE_INVALID_TRANSFER_ENCODING';
  writeEnvelope(socket, 'invalid_request', smuggling ? 'send either Transfer-Encoding or Content-Length, not both' : 'the HTTP request is malformed');
}

/**
 * Refuses a request whose body stops arriving (Content-Length longer than what was sent, a chunked
 * body never terminated) after {@link BODY_STALL_MS} of silence, with 408 `request_timeout` and a
 * closed connection. Progress is read from the socket's byte counter, so the body stream itself
 * is left to fastify's parser untouched.
 */
export function installBodyStallGuard(app: FastifyInstance, stallMs = BODY_STALL_MS): void {
  app.addHook('onRequest', (req, reply, done) => {
    const raw = req.raw;
    if (raw.complete || (raw.headers['content-length'] === undefined && raw.headers['transfer-encoding'] === undefined)) return done();
    const socket = raw.socket;
    let last = socket.bytesRead;
    let quietSince = Date.now();
    const check = () => {
      // Once an answer has started (a 415 or 404 sent without reading the body), it is the answer.
      if (raw.complete || socket.destroyed || reply.raw.headersSent) return;
      if (socket.bytesRead !== last) {
        last = socket.bytesRead;
        quietSince = Date.now();
      } else if (Date.now() - quietSince >= stallMs) {
        req.log.info({ req }, 'request body stalled; refused');
        return writeEnvelope(socket, 'request_timeout', `the request body stopped arriving before it was complete (${stallMs} ms without data)`, req.id);
      }
      setTimeout(check, STALL_CHECK_MS).unref();
    };
    setTimeout(check, STALL_CHECK_MS).unref();
    done();
  });
}
