import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A scratch Postgres database for one benchmark run, dropped afterwards. */
export async function scratchDb(baseUrl: string): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `tg_bench_${randomBytes(4).toString('hex')}`;
  const c = new pg.Client({ connectionString: baseUrl });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  // BENCH_AUTO_EXPLAIN_MS=<ms>: the server logs the plan of every statement of this database slower
  // than that (auto_explain, to the cluster's log), to see the plans the gateway's connections run.
  const explainMs = process.env.BENCH_AUTO_EXPLAIN_MS;
  if (explainMs && /^\d+(\.\d+)?$/.test(explainMs)) {
    await c.query(`ALTER DATABASE ${name} SET session_preload_libraries = 'auto_explain'`);
    await c.query(`ALTER DATABASE ${name} SET auto_explain.log_min_duration = '${explainMs}ms'`);
  }
  await c.end();
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    name,
    drop: async () => {
      // BENCH_KEEP_DB=1 keeps the database for a look afterwards (EXPLAIN, row counts); its name is printed.
      if (process.env.BENCH_KEEP_DB === '1') return void console.log(`kept database ${name}`);
      const d = new pg.Client({ connectionString: baseUrl });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}
