// The countdown to a session's or order's `expires_at` (Unix seconds, server time). The browser's
// clock may be off: callers pass `now` already corrected by the server's Date header.

/** Whole seconds left until `expiresAt` (Unix s) at `nowMs`; never negative. */
export function secondsLeft(expiresAt: number, nowMs: number): number {
  return Math.max(0, Math.floor(expiresAt - nowMs / 1000));
}

/**
 * `m:ss` under an hour, `h:mm:ss` from an hour.
 *
 * @example formatCountdown(872) // => '14:32'
 * @example formatCountdown(3723) // => '1:02:03'
 * @example formatCountdown(0) // => '0:00'
 */
export function formatCountdown(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/**
 * Words for screen readers, coarse on purpose (announced rarely, not every second).
 *
 * @example describeCountdown(872) // => '14 minutes 32 seconds'
 * @example describeCountdown(61) // => '1 minute 1 second'
 */
export function describeCountdown(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const parts: string[] = [];
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const unit = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  if (h) parts.push(unit(h, 'hour'));
  if (m) parts.push(unit(m, 'minute'));
  if (sec || parts.length === 0) parts.push(unit(sec, 'second'));
  return parts.join(' ');
}

/**
 * The offset (ms) to add to the browser clock to get server time, from a response's `Date` header
 * (second resolution, so offsets under 2 s are ignored as noise).
 *
 * @example clockOffsetMs('Thu, 01 Jan 2026 00:00:10 GMT', Date.UTC(2026, 0, 1)) // => 10000
 */
export function clockOffsetMs(dateHeader: string | null, browserNowMs: number): number {
  if (!dateHeader) return 0;
  const server = Date.parse(dateHeader);
  if (!Number.isFinite(server)) return 0;
  const off = server - browserNowMs;
  return Math.abs(off) < 2000 ? 0 : off;
}
