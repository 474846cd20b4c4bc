// Every route's request and response schemas compile with the server's compilers and options. The
// server compiles a route's schemas on its first request (http/compilers.ts), so a schema that does
// not compile would otherwise show only as a 500 on that route's first request, not at start.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { AJV_OPTIONS } from '../../src/http/compilers.ts';
import { ErrorEnvelopeSchema } from '../../src/http/schemas.ts';
import { ROUTES } from '../../src/routes.ts';

describe('route schemas', () => {
  const validator = AjvCompiler()({}, AJV_OPTIONS as never);
  const serializer = SerializerSelector()({}, undefined);

  it('every request schema compiles with the server ajv options', () => {
    let n = 0;
    for (const r of ROUTES) {
      for (const httpPart of ['body', 'querystring', 'params'] as const) {
        const schema = r[httpPart];
        if (!schema) continue;
        const fn = validator({ schema, method: r.method, url: r.url, httpPart });
        assert.equal(typeof fn, 'function', `${r.method} ${r.url} ${httpPart}`);
        n++;
      }
    }
    assert.ok(n > 50, `${n} request schemas`);
  });

  it('every response schema compiles with fast-json-stringify, and serialises what it declares', () => {
    let n = 0;
    for (const r of ROUTES) {
      for (const [status, schema] of Object.entries(r.response)) {
        const fn = serializer({ schema, method: r.method, url: r.url, httpStatus: status });
        assert.equal(typeof fn, 'function', `${r.method} ${r.url} ${status}`);
        n++;
      }
    }
    assert.ok(n > 100, `${n} response schemas`);
    const envelope = serializer({ schema: ErrorEnvelopeSchema, method: 'GET', url: '/x', httpStatus: '400' });
    assert.deepEqual(JSON.parse(envelope({ error: 'bad', code: 'invalid_request', request_id: 'req_1', extra: 1 })), { error: 'bad', code: 'invalid_request', request_id: 'req_1' });
  });
});
