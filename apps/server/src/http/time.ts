/** Earliest and latest instants a time input may name: the Unix epoch to the end of year 9999. */
const MIN_INPUT_TIME_MS = Date.UTC(1970, 0, 1);
const MAX_INPUT_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/i;

/**
 * Parses an RFC 3339 time given as input, or undefined when it is malformed, names a calendar date
 * that does not exist (Date would roll `02-30` into March), or lies outside 1970..9999: the year
 * 0000 passes JavaScript's Date but not every database driver (it was a 500 on admin redeliver).
 *
 * @example parseRfc3339('2025-01-31T12:00:00+01:00')?.toISOString() // => '2025-01-31T11:00:00.000Z'
 * @example parseRfc3339('0000-01-01T00:00:00Z') // => undefined
 */
export function parseRfc3339(s: string): Date | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const offH = m[9] === undefined ? 0 : Number(m[9]);
  const offM = m[10] === undefined ? 0 : Number(m[10]);
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 59 || offH > 23 || offM > 59) return undefined;
  const local = new Date(Date.UTC(y, mo - 1, d, h, mi, sec));
  local.setUTCFullYear(y); // Date.UTC maps years 0..99 to 1900..1999
  if (local.getUTCDate() !== d || local.getUTCMonth() !== mo - 1) return undefined;
  const sign = m[8]!.startsWith('-') ? -1 : 1;
  const ms = local.getTime() + Math.round(Number(m[7] ?? 0) * 1000) - (m[8]!.toUpperCase() === 'Z' ? 0 : sign * (offH * 60 + offM) * 60_000);
  if (!(ms >= MIN_INPUT_TIME_MS && ms <= MAX_INPUT_TIME_MS)) return undefined;
  return new Date(ms);
}
