import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/**
 * Fastify's schema compilers (ajv for requests, fast-json-stringify for responses), made lazy and
 * shared by every app in the process.
 *
 * Why: by default fastify compiles every route's validators and serializers when the route is
 * registered. With ~120 routes that was most of a start's CPU and heap (ajv and fast-json-stringify
 * generate and compile code for each schema), although an idle process and a worker answer a handful
 * of routes. Here a route's schema is compiled on its first request, once per process: the Ajv
 * instance is module-level (ajv keeps compiled schemas per schema object) and serializers are kept
 * per schema object, so a second app in the same process (the test suite's servers, `serve` with
 * several roles) compiles nothing again. A schema that does not compile fails its first request
 * (500) instead of the start; `test/unit/route-schemas.test.ts` compiles every route's schemas.
 */

// One pool for the process: AjvCompiler() keys its Ajv instances by the options, so the same
// options give the same instance, and with it ajv's own cache of compiled schemas.
const buildAjv = AjvCompiler();

/** The server's ajv options (fastify's `ajv` option): no coercion, no stripping, first error only. */
export const AJV_OPTIONS = { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } };
const buildStringify = SerializerSelector();

type Validate = ((data: unknown, ctx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Stringify = (doc: unknown) => string;

/**
 * A validator that compiles on first use. Fastify reads `schemaEnv` (to pass the parent data that
 * ajv needs to replace a root value) and, after a failed call, `errors` from the function it holds:
 * both are forwarded to the compiled one.
 */
function lazyValidator(compile: () => Validate): Validate {
  let fn: Validate | undefined;
  const get = () => (fn ??= compile());
  const v = ((data: unknown, ctx?: unknown) => get()(data, ctx)) as Validate;
  Object.defineProperty(v, 'errors', { get: () => get().errors });
  Object.defineProperty(v, 'schemaEnv', { get: () => get().schemaEnv });
  return v;
}

const serializers = new WeakMap<object, Stringify>();

export const lazySchemaCompilers: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: {
    buildValidator: ((externalSchemas, options) => {
      const compile = buildAjv(externalSchemas, options);
      return ((route) => lazyValidator(() => compile(route) as unknown as Validate)) as typeof compile;
    }) as typeof buildAjv,
    buildSerializer: ((externalSchemas, options) => {
      const compile = buildStringify(externalSchemas, options);
      return (route) => {
        let fn: Stringify | undefined;
        const key = typeof route.schema === 'object' && route.schema !== null ? (route.schema as object) : undefined;
        return (doc: unknown) => {
          if (!fn) {
            fn = key ? serializers.get(key) : undefined;
            if (!fn) {
              fn = compile(route);
              if (key) serializers.set(key, fn);
            }
          }
          return fn(doc);
        };
      };
    }) as typeof buildStringify,
  },
};
