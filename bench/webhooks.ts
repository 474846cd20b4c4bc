/**
 * Webhook dispatcher on PostgreSQL: deliveries per second to a local receiver, and the latency
 * from an event's commit to its arrival at the receiver. Each is run ROUNDS times, interleaved;
 * medians of the rounds are reported.
 *
 * - throughput: BACKLOG events are already in the outbox (one endpoint); the dispatcher starts
 *   and drains it; rate = deliveries / (time from start to the last delivery recorded). For
 *   comparison the same backlog is also drained by `dispatchOnce` rounds (claim 200, send,
 *   record, in sequence: the design the pipeline worker replaced).
 * - latency: the dispatcher is running; a producer commits one event per transaction (like an
 *   order transition) at RATE events/s for LATENCY_MS; latency = arrival at the receiver − commit.
 *
 * The receiver is a bare node:http server in a child process (two cores: it must not share the
 * dispatcher's event loop); both processes stamp with performance.timeOrigin + now().
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/webhooks.ts
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../apps/server/src/config/schema.ts';
import type { Database } from '../apps/server/src/db/database.ts';
import { migrate } from '../apps/server/src/db/migrate.ts';
import { openPostgres } from '../apps/server/src/db/postgres.ts';
import { systemClock } from '../apps/server/src/clock.ts';
import { dispatchOnce, startWebhookDispatcher } from '../apps/server/src/webhooks/dispatcher.ts';
import { emitEvent } from '../apps/server/src/webhooks/outbox.ts';
import { WebhookService } from '../apps/server/src/webhooks/service.ts';
import { median } from './lib/load.ts';
import { scratchDb } from './lib/db.ts';

const BASE_DB = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 20_000);
const RATES = (process.env.BENCH_RATES ?? '200,1000').split(',').map(Number);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 5000);
const DISPATCHER = {
  ...(process.env.BENCH_BATCH ? { batchSize: Number(process.env.BENCH_BATCH) } : {}),
  ...(process.env.BENCH_IN_FLIGHT ? { maxInFlight: Number(process.env.BENCH_IN_FLIGHT) } : {}),
};
const now = () => performance.timeOrigin + performance.now();

const RECEIVER = `
import http from 'node:http';
const arrivals = new Map();
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    arrivals.set(req.headers['webhook-id'], performance.timeOrigin + performance.now());
    res.writeHead(200, { 'content-length': '0' });
    res.end();
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => {
  if (m === 'count') process.send({ count: arrivals.size });
  if (m === 'dump') { process.send({ arrivals: [...arrivals] }); arrivals.clear(); }
});
`;

function startReceiver(): Promise<{ url: string; ask: <T>(m: string) => Promise<T>; stop: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-bench-rx-'));
  const file = join(dir, 'receiver.mjs');
  writeFileSync(file, RECEIVER);
  const child = fork(file, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = <T>(m: string) =>
    new Promise<T>((resolve) => {
      child.once('message', (v) => resolve(v as T));
      child.send(m);
    });
  return new Promise((resolve) => child.once('message', (m: { port: number }) => resolve({ url: `http://127.0.0.1:${m.port}/webhooks`, ask, stop: () => child.kill() })));
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
};

async function main() {
  const scratch = await scratchDb(BASE_DB);
  const rx = await startReceiver();
  const producer = await openPostgres(scratch.url, { max: 16 });
  const dispatcherDb = await openPostgres(scratch.url, { max: 8 });
  try {
    await migrate(producer);
    const config = { environment: 'test', masterKey: randomBytes(32), chains: [] } as unknown as Config;
    await producer.query(`INSERT INTO merchants (id, name) VALUES ('bench', 'Bench')`);
    const svc = new WebhookService(producer, config, systemClock);
    const ep = await svc.createEndpoint('bench', { url: rx.url, events: ['order.invoiced'] });
    if (ep.kind !== 'created') throw new Error(ep.kind);
    const deps = { db: dispatcherDb as Database, clock: systemClock, config };
    const emit = (tx: Parameters<typeof emitEvent>[0], i: number) => emitEvent(tx, { merchantId: 'bench', event: 'order.invoiced', payload: { order_id: `ord_${i}`, status: 'INVOICED', amount_wei: '1000000' }, orderId: `ord_${i}`, clockNow: new Date() });

    const throughput: { rate: number; enqueue: number; sequential: number }[] = [];
    const fill = async () => {
      await producer.query('TRUNCATE webhook_attempts, webhook_deliveries, webhook_events');
      await rx.ask('dump');
      const t0 = now();
      for (let i = 0; i < BACKLOG; i += 500) {
        await producer.transaction(async (tx) => {
          for (let j = i; j < Math.min(BACKLOG, i + 500); j++) await emit(tx, ++seq);
        });
      }
      return BACKLOG / ((now() - t0) / 1000);
    };
    const latency: Record<number, { p50: number; p99: number; n: number }[]> = Object.fromEntries(RATES.map((r) => [r, []]));
    let seq = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // --- throughput: drain a backlog
      const enqueue = await fill();
      const started = now();
      const worker = startWebhookDispatcher(deps, { ...DISPATCHER, workerId: `bench-${round}` });
      // Watch the receiver (cheap IPC), then confirm in the database that every result is recorded.
      while ((await rx.ask<{ count: number }>('count')).count < BACKLOG) await new Promise((r) => setTimeout(r, 10));
      for (;;) {
        const { rows } = await producer.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`);
        if (rows[0]!.n >= BACKLOG) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      const rate = BACKLOG / ((now() - started) / 1000);
      await worker.stop();
      await fill();
      const seqStart = now();
      while ((await dispatchOnce(deps, { ...DISPATCHER, workerId: `bench-seq-${round}` })).claimed > 0);
      const sequential = BACKLOG / ((now() - seqStart) / 1000);
      throughput.push({ rate, enqueue, sequential });

      // --- latency at steady rates, dispatcher running
      for (const r of RATES) {
        await producer.query('TRUNCATE webhook_attempts, webhook_deliveries, webhook_events');
        await rx.ask('dump');
        const w = startWebhookDispatcher(deps, { ...DISPATCHER, workerId: `bench-lat-${round}-${r}` });
        await new Promise((res) => setTimeout(res, 200));
        const commits = new Map<string, number>();
        const interval = 1000 / r;
        const end = now() + LATENCY_MS;
        let next = now();
        const inflight: Promise<void>[] = [];
        while (now() < end) {
          const i = ++seq;
          inflight.push(producer.transaction((tx) => emit(tx, i)).then((out) => void commits.set(out.eventId, now())));
          next += interval;
          const wait = next - now();
          if (wait > 1) await new Promise((res) => setTimeout(res, wait));
          else if (inflight.length % 50 === 0) await new Promise((res) => setImmediate(res));
        }
        await Promise.all(inflight);
        for (let tries = 0; tries < 200; tries++) {
          if ((await rx.ask<{ count: number }>('count')).count >= commits.size) break;
          await new Promise((res) => setTimeout(res, 25));
        }
        await w.stop();
        const { arrivals } = await rx.ask<{ arrivals: [string, number][] }>('dump');
        const lat = arrivals.filter(([id]) => commits.has(id)).map(([id, t]) => t - commits.get(id)!);
        latency[r]!.push({ p50: pct(lat, 0.5), p99: pct(lat, 0.99), n: lat.length });
        if (lat.length < commits.size) console.error(`rate ${r}: only ${lat.length}/${commits.size} arrived`);
      }
      console.error(
        `round ${round + 1}/${ROUNDS}: ${throughput.at(-1)!.rate.toFixed(0)} deliveries/s (sequential ${throughput.at(-1)!.sequential.toFixed(0)}); ` +
          RATES.map((r) => `${r}/s → p50 ${latency[r]!.at(-1)!.p50.toFixed(1)} ms p99 ${latency[r]!.at(-1)!.p99.toFixed(1)} ms`).join('; '),
      );
    }

    console.log(`\nrounds=${ROUNDS} backlog=${BACKLOG} latency runs ${LATENCY_MS} ms each; one endpoint, receiver in a child process; Postgres; medians of rounds\n`);
    console.log('| measure | value (median) | rounds |');
    console.log('|---|---|---|');
    console.log(`| deliveries/s draining a ${BACKLOG}-event backlog | ${median(throughput.map((t) => t.rate)).toFixed(0)} | ${throughput.map((t) => t.rate.toFixed(0)).join(', ')} |`);
    console.log(`| same, dispatchOnce rounds (claim → send → record in sequence) | ${median(throughput.map((t) => t.sequential)).toFixed(0)} | ${throughput.map((t) => t.sequential.toFixed(0)).join(', ')} |`);
    console.log(`| events enqueued/s (emitEvent, 500 per transaction) | ${median(throughput.map((t) => t.enqueue)).toFixed(0)} | ${throughput.map((t) => t.enqueue.toFixed(0)).join(', ')} |`);
    for (const r of RATES) {
      const rs = latency[r]!;
      console.log(`| commit→received p50 at ${r} events/s | ${median(rs.map((x) => x.p50)).toFixed(1)} ms | ${rs.map((x) => x.p50.toFixed(1)).join(', ')} |`);
      console.log(`| commit→received p99 at ${r} events/s | ${median(rs.map((x) => x.p99)).toFixed(1)} ms | ${rs.map((x) => x.p99.toFixed(1)).join(', ')} |`);
    }
  } finally {
    rx.stop();
    await dispatcherDb.close();
    await producer.close();
    await scratch.drop();
  }
}

await main();
