import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyStatus, JITTER, MAX_ATTEMPTS, RETRY_DELAYS_SECONDS, retryDelayMs } from '../../src/webhooks/schedule.ts';

const DAY = 86_400_000;

describe('webhook retry schedule', () => {
  it('follows docs/webhooks.md: 10 s, 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, then every 24 h', () => {
    const nominal = Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => retryDelayMs(i + 1, () => 0.5));
    assert.deepEqual(
      nominal,
      [10, 60, 300, 1800, 7200, 21600, 43200, 86400, 86400, 86400].map((s) => s * 1000),
    );
    assert.equal(MAX_ATTEMPTS, 11);
  });

  it('gives up after the last attempt (dead)', () => {
    assert.equal(
      retryDelayMs(MAX_ATTEMPTS, () => 0.5),
      undefined,
    );
    assert.equal(
      retryDelayMs(MAX_ATTEMPTS + 5, () => 0.5),
      undefined,
    );
  });

  it('spans at least 3 days even with every delay jittered to its minimum', () => {
    const total = (r: number) => Array.from({ length: MAX_ATTEMPTS - 1 }, (_, i) => retryDelayMs(i + 1, () => r)!).reduce((a, b) => a + b, 0);
    assert.ok(total(0) >= 3 * DAY, `min total ${total(0) / DAY} days`);
    assert.ok(total(0.999999) < 5 * DAY, 'and not absurdly long');
  });

  it('jitters each delay within ±10 %', () => {
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      const nominal = RETRY_DELAYS_SECONDS[attempt - 1]! * 1000;
      assert.equal(
        retryDelayMs(attempt, () => 0),
        Math.round(nominal * (1 - JITTER)),
      );
      assert.equal(
        retryDelayMs(attempt, () => 1),
        Math.round(nominal * (1 + JITTER)),
      );
      for (let i = 0; i < 50; i++) {
        const d = retryDelayMs(attempt)!;
        assert.ok(d >= nominal * 0.9 - 1 && d <= nominal * 1.1 + 1, `${attempt}: ${d}`);
      }
    }
  });

  it('clamps a misbehaving random source and refuses bad attempt numbers', () => {
    assert.equal(
      retryDelayMs(1, () => -3),
      9000,
    );
    assert.equal(
      retryDelayMs(1, () => 7),
      11000,
    );
    assert.throws(() => retryDelayMs(0), RangeError);
    assert.throws(() => retryDelayMs(1.5), RangeError);
  });
});

describe('classifyStatus', () => {
  it('2xx is delivered', () => {
    for (const s of [200, 201, 202, 204, 299]) assert.deepEqual(classifyStatus(s), { kind: 'delivered' });
  });
  it('5xx, 408, 429, 3xx and no response are retried', () => {
    for (const s of [500, 502, 503, 504, 599, 408, 429, 301, 302, 304, 100, undefined]) assert.deepEqual(classifyStatus(s), { kind: 'retry' }, String(s));
  });
  it('other 4xx are refusals', () => {
    for (const s of [400, 401, 403, 404, 405, 409, 410, 413, 422, 499]) assert.deepEqual(classifyStatus(s), { kind: 'refused' }, String(s));
  });
});
