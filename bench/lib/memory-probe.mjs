// Preloaded into the measured gateway (`node --import bench/lib/memory-probe.mjs …`): on SIGUSR2 it
// prints one line `MEMPROBE {json}` to stderr with process.memoryUsage() and /proc/self/smaps_rollup
// (kB), so a benchmark can split the process's RSS without changing the gateway. Benchmarks only.
import { readFileSync } from 'node:fs';

process.on('SIGUSR2', () => {
  const rollup = {};
  try {
    for (const line of readFileSync('/proc/self/smaps_rollup', 'utf8').split('\n')) {
      const m = /^(\w+):\s+(\d+) kB/.exec(line);
      if (m) rollup[m[1]] = Number(m[2]);
    }
  } catch {
    // not Linux: memoryUsage alone
  }
  process.stderr.write(`MEMPROBE ${JSON.stringify({ ...process.memoryUsage(), rollup })}\n`);
});
