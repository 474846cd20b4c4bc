// Loaded into every test file's process by scripts/test.mjs (`--import`): at exit it records the
// file's wall time and CPU time, its own and that of the children it waited for (anvil, chromium,
// gateways in child processes; not the shared PostgreSQL server), and how long its main thread
// waited for a CPU while runnable, for scripts/test-durations.mjs. On a machine shared with other
// work, wall times swing with the load; CPU seconds much less, and the wait shows the load's share.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.TOLLGATE_TEST_PROBE_DIR;
// NODE_TEST_CONTEXT is set in the processes the runner starts for test files, not in the runner.
if (dir && process.env.NODE_TEST_CONTEXT && process.argv[1]) {
  process.on('exit', () => {
    try {
      // /proc/self/stat: after "pid (comm)", utime stime cutime cstime are fields 14–17, in ticks.
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = (i) => Number(f[i - 3]) / 100;
      // /proc/self/schedstat (the main thread): ns on a CPU, ns runnable but waiting for one.
      const runq = Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]) / 1e9;
      const record = { file: process.argv[1], wall: performance.now() / 1000, cpu: ticks(14) + ticks(15), childCpu: ticks(16) + ticks(17), runq };
      writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(record));
    } catch {
      /* no /proc (not Linux): wall times only */
    }
  });
}
