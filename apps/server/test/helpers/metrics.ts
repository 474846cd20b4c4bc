/**
 * Reads one sample out of a Prometheus text exposition: the series `name` whose label set is
 * exactly `labels` (any order), or undefined when absent.
 *
 * @example sample(text, 'tollgate_orders', { status: 'INVOICED', flow: 'ERC20_DIRECT' }) // => 1
 */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]);
    if (JSON.stringify(got.sort()) === want) return Number(m[3]);
  }
  return undefined;
}
