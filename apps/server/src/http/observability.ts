import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Registry, collectDefaultMetrics, Histogram } from 'prom-client';
import type { BatchStats } from '../db/batcher.ts';
import type { Database } from '../db/database.ts';

/**
 * `/healthz` (process up), `/readyz` (database reachable), `/metrics` (Prometheus), `/openapi.json`.
 * `batchers`: the group-commit counters of the services, by label (the composition root names them).
 */
export function installObservability(app: FastifyInstance, deps: { db: Database }, batchers: Readonly<Record<string, () => BatchStats>>, registry: Registry = new Registry()): Registry {
  // One registry per app instance (tests build many apps in one process); the composition root
  // passes the one its operator metrics (metrics/ops.ts) already registered in.
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'tollgate_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern (never the concrete path: ids stay out of labels)',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  app.addHook('onResponse', async (req, reply) => {
    duration.observe({ method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });

  installBatchMetrics(registry, batchers);

  const hide = { schema: { hide: true } };
  app.get('/healthz', hide, async () => ({ status: 'ok' }));
  app.get('/readyz', hide, async (req, reply) => {
    try {
      await deps.db.query('SELECT 1');
      return { status: 'ready' };
    } catch {
      reply.status(503);
      // Every non-2xx carries the error envelope (docs/errors.md), request_id included.
      return { status: 'unavailable', error: 'database unreachable', code: 'service_unavailable', request_id: req.id };
    }
  });
  app.get('/metrics', hide, async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  app.get('/openapi.json', hide, async () => app.swagger());
  return registry;
}

/**
 * Group commit (db/batcher.ts), read at scrape time: `rate(items) / rate(batches)` is the mean batch
 * size, which tells an operator whether creation is amortizing commits (large batches under load)
 * or waiting on the database (a growing queue). Counts of this process since it started.
 */
function installBatchMetrics(registry: Registry, sources: Record<string, () => BatchStats>): void {
  const labelNames = ['batcher'] as const;
  new Counter({
    name: 'tollgate_db_batches_total',
    help: 'Group-commit batches sent to the database, by batcher',
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const [batcher, read] of Object.entries(sources)) this.inc({ batcher }, read().batches);
    },
  });
  new Counter({
    name: 'tollgate_db_batch_items_total',
    help: 'Items carried by group-commit batches, by batcher (divided by batches: the mean batch size)',
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const [batcher, read] of Object.entries(sources)) this.inc({ batcher }, read().items);
    },
  });
  new Gauge({
    name: 'tollgate_db_batch_queued',
    help: 'Items waiting for the next group-commit batch, by batcher',
    labelNames,
    registers: [registry],
    collect() {
      for (const [batcher, read] of Object.entries(sources)) this.set({ batcher }, read().queued);
    },
  });
}
