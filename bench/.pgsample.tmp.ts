import pg from 'pg';
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' }); await c.connect();
const end = Date.now() + Number(process.argv[2]) * 1000;
while (Date.now() < end) {
  const r = await c.query(`SELECT now()::time(0)::text AS t, backend_type, coalesce(wait_event_type,'-') || ':' || coalesce(wait_event,'-') AS w, left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS q FROM pg_stat_activity WHERE state = 'active' AND (datname LIKE 'tg_bench%' OR backend_type <> 'client backend') AND pid <> pg_backend_pid()`);
  for (const x of r.rows) console.log(`${x.t} | ${x.backend_type} | ${x.w} | ${x.q}`);
  await new Promise((r) => setTimeout(r, 10));
}
await c.end();
