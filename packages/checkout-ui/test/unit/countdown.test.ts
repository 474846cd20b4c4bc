import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clockOffsetMs, describeCountdown, formatCountdown, secondsLeft } from '../../src/lib/countdown.ts';

test('secondsLeft: whole seconds to expires_at, never negative', () => {
  assert.equal(secondsLeft(1000, 990_000), 10);
  assert.equal(secondsLeft(1000, 990_400), 9);
  assert.equal(secondsLeft(1000, 1_000_000), 0);
  assert.equal(secondsLeft(1000, 2_000_000), 0);
});

test('formatCountdown: m:ss under an hour, h:mm:ss from an hour', () => {
  const cases: [number, string][] = [
    [0, '0:00'],
    [-5, '0:00'],
    [9, '0:09'],
    [59, '0:59'],
    [60, '1:00'],
    [872, '14:32'],
    [3599, '59:59'],
    [3600, '1:00:00'],
    [3723, '1:02:03'],
    [86_400, '24:00:00'],
    [12.9, '0:12'],
  ];
  for (const [s, want] of cases) assert.equal(formatCountdown(s), want, String(s));
});

test('describeCountdown: words for screen readers', () => {
  assert.equal(describeCountdown(872), '14 minutes 32 seconds');
  assert.equal(describeCountdown(61), '1 minute 1 second');
  assert.equal(describeCountdown(3600), '1 hour');
  assert.equal(describeCountdown(0), '0 seconds');
});

test('clockOffsetMs: server Date header vs browser clock; small or bad values ignored', () => {
  const now = Date.UTC(2026, 0, 1);
  assert.equal(clockOffsetMs('Thu, 01 Jan 2026 00:00:10 GMT', now), 10_000);
  assert.equal(clockOffsetMs('Wed, 31 Dec 2025 23:59:00 GMT', now), -60_000);
  assert.equal(clockOffsetMs('Thu, 01 Jan 2026 00:00:01 GMT', now), 0);
  assert.equal(clockOffsetMs(null, now), 0);
  assert.equal(clockOffsetMs('yesterday-ish', now), 0);
});
