// A second reporter for scripts/test.mjs: each test file's wall time (from its process's start to its
// end, as the runner measures it), CPU seconds (scripts/test-probe.mjs: the file's process and the
// children it waited for) and number of tests, slowest first, as TSV. Where the suite's time goes
// is read from here (CONTRIBUTING.md, Tests).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';

export default async function* durations(source) {
  const started = Date.now();
  const load = loadavg()[0];
  const files = new Map(); // file -> { seconds, cpu, tests, failed }
  const entry = (file) => {
    let e = files.get(file);
    if (!e) files.set(file, (e = { seconds: 0, cpu: NaN, runq: NaN, tests: 0, failed: 0 }));
    return e;
  };
  for await (const ev of source) {
    const d = ev.data;
    if (!d?.file) continue;
    // The runner reports each file as a test of its own, named by the path it was given.
    const isFile = d.nesting === 0 && resolve(d.name ?? '') === d.file;
    if (ev.type === 'test:complete' && isFile) entry(d.file).seconds = d.details.duration_ms / 1000;
    else if ((ev.type === 'test:pass' || ev.type === 'test:fail') && d.details?.type !== 'suite' && !isFile) {
      const e = entry(d.file);
      e.tests++;
      if (ev.type === 'test:fail') e.failed++;
    }
  }
  const probeDir = process.env.TOLLGATE_TEST_PROBE_DIR;
  if (probeDir && existsSync(probeDir)) {
    for (const name of readdirSync(probeDir)) {
      try {
        const p = JSON.parse(readFileSync(join(probeDir, name), 'utf8'));
        const e = entry(resolve(p.file));
        e.cpu = p.cpu + p.childCpu;
        e.runq = p.runq ?? NaN;
      } catch {
        /* a half-written record of a killed process */
      }
    }
  }
  const rows = [...files].sort((a, b) => b[1].seconds - a[1].seconds);
  const cwd = process.cwd() + '/';
  const sum = (k) => rows.reduce((s, [, e]) => s + (Number.isNaN(e[k]) ? 0 : e[k]), 0);
  yield `# wall ${((Date.now() - started) / 1000).toFixed(1)} s, sum of files ${sum('seconds').toFixed(1)} s, CPU ${sum('cpu').toFixed(1)} s, ` + `${sum('tests')} tests, load average at start ${load.toFixed(2)}, at end ${loadavg()[0].toFixed(2)}\n`;
  // runq: seconds the file's main thread was runnable but waited for a CPU (the load's share).
  yield 'seconds\tcpu\trunq\ttests\tfailed\tfile\n';
  const num = (v) => (Number.isNaN(v) ? '' : v.toFixed(1));
  for (const [file, e] of rows) {
    yield `${e.seconds.toFixed(1)}\t${num(e.cpu)}\t${num(e.runq)}\t${e.tests}\t${e.failed}\t${file.startsWith(cwd) ? file.slice(cwd.length) : file}\n`;
  }
}
