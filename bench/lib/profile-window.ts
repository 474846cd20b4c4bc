// Summarises a V8 .cpuprofile (node --cpu-prof) over one time window: the self and inclusive time
// of the top functions, as shares of the non-idle time. The benchmarks print the window of each
// workload (`profile window <name>: <from µs> <to µs>`, monotonic clock, as V8's timestamps), so a
// profile of a whole run can be read per workload.
//
//   npx tsx bench/lib/profile-window.ts <file.cpuprofile> [<from µs> <to µs>] [top]
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [file, fromArg, toArg, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-window.ts <file.cpuprofile> [<from µs> <to µs>] [top]');
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const from = fromArg ? Number(fromArg) : -Infinity;
const to = toArg ? Number(toArg) : Infinity;
const top = Number(topArg ?? 40);

const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const name = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/node_modules\//, '').replace(/^.*\/(apps|packages)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
const IDLE = new Set(['(idle)', '(program)']);

const self = new Map<string, number>();
const incl = new Map<string, number>();
let busy = 0;
let t = p.startTime;
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i] ?? 0;
  const dt = p.timeDeltas[i + 1] ?? 0; // a sample's weight: the time until the next one
  if (t < from || t > to) continue;
  const leaf = byId.get(p.samples[i]!)!;
  if (IDLE.has(leaf.callFrame.functionName)) continue;
  busy += dt;
  self.set(name(leaf), (self.get(name(leaf)) ?? 0) + dt);
  const seen = new Set<string>();
  for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
    const k = name(byId.get(id)!);
    if (!seen.has(k)) seen.add(k), incl.set(k, (incl.get(k) ?? 0) + dt);
  }
}
const show = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${((100 * v) / busy).toFixed(1).padStart(5)} %  ${k}`)
    .join('\n');
console.log(`busy ${(busy / 1000).toFixed(0)} ms in the window`);
console.log(`--- self\n${show(self)}\n--- inclusive\n${show(incl)}`);
