import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { KeyedBatcher } from '../../src/db/batcher.ts';

/** A run function that records its batches and finishes only when told to. */
function controlled<I>() {
  const batches: { key: string; items: I[]; finish: (err?: Error) => void }[] = [];
  const run = (key: string, items: I[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push({ key, items, finish: (err) => (err ? reject(err) : resolve(items.map((x) => `${key}:${String(x)}`))) });
    });
  return { batches, run };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedBatcher', () => {
  it('runs a lone item at the next turn of the event loop, with its own result', async () => {
    const c = controlled<number>();
    const b = new KeyedBatcher(c.run, { maxBatch: 10 });
    const p = b.submit('k', 1);
    assert.equal(c.batches.length, 0, 'nothing runs synchronously');
    await tick();
    assert.deepEqual(
      c.batches.map((x) => x.items),
      [[1]],
    );
    c.batches[0]!.finish();
    assert.equal(await p, 'k:1');
    assert.equal(b.pending, 0);
  });

  it('collects what is submitted in the same turn into one batch', async () => {
    const c = controlled<number>();
    const b = new KeyedBatcher(c.run, { maxBatch: 10 });
    const ps = [1, 2, 3].map((x) => b.submit('k', x));
    assert.deepEqual(b.stats(), { batches: 0, items: 0, queued: 3 });
    await tick();
    assert.deepEqual(
      c.batches.map((x) => x.items),
      [[1, 2, 3]],
    );
    assert.deepEqual(b.stats(), { batches: 1, items: 3, queued: 0 });
    c.batches[0]!.finish();
    assert.deepEqual(await Promise.all(ps), ['k:1', 'k:2', 'k:3']);
  });

  it('groups items arriving while a batch is in flight into the next batch, in order', async () => {
    const c = controlled<number>();
    const b = new KeyedBatcher(c.run, { maxBatch: 10 });
    const first = b.submit('k', 0);
    await tick();
    const later = [1, 2, 3, 4, 5].map((x) => b.submit('k', x));
    await tick();
    assert.equal(c.batches.length, 1, 'the second batch waits for the first');
    assert.equal(b.pending, 5);
    c.batches[0]!.finish();
    assert.equal(await first, 'k:0');
    await tick();
    assert.deepEqual(c.batches[1]!.items, [1, 2, 3, 4, 5]);
    c.batches[1]!.finish();
    assert.deepEqual(await Promise.all(later), ['k:1', 'k:2', 'k:3', 'k:4', 'k:5']);
  });

  it('sends the next batch before answering the finished one, even when sending takes a nextTick (as in pg-pool)', async () => {
    const events: string[] = [];
    const finish: (() => void)[] = [];
    const b = new KeyedBatcher(
      (_key, items: number[]) =>
        new Promise<number[]>((resolve) => {
          // pg-pool hands out an idle connection from a process.nextTick; the statement leaves then.
          process.nextTick(() => events.push(`sent ${items.join(',')}`));
          finish.push(() => resolve(items));
        }),
      { maxBatch: 10 },
    );
    const first = b.submit('k', 1).then(() => events.push('answered 1'));
    await tick();
    const second = b.submit('k', 2).then(() => events.push('answered 2'));
    await tick();
    finish[0]!();
    await first;
    assert.deepEqual(events, ['sent 1', 'sent 2', 'answered 1'], 'batch 2 leaves before batch 1 is answered');
    finish[1]!();
    await second;
    assert.deepEqual(events.slice(3), ['answered 2']);
  });

  it('splits at maxBatch', async () => {
    const c = controlled<number>();
    const b = new KeyedBatcher(c.run, { maxBatch: 2, maxInFlight: 5 });
    const ps = [1, 2, 3, 4, 5].map((x) => b.submit('k', x));
    await tick();
    assert.deepEqual(
      c.batches.map((x) => x.items),
      [[1, 2], [3, 4], [5]],
    );
    c.batches.forEach((x) => x.finish());
    assert.deepEqual(await Promise.all(ps), ['k:1', 'k:2', 'k:3', 'k:4', 'k:5']);
  });

  it('keeps at most maxInFlight batches of a key running; keys do not wait for each other', async () => {
    const c = controlled<number>();
    const b = new KeyedBatcher(c.run, { maxBatch: 1, maxInFlight: 2 });
    const ps = [1, 2, 3].map((x) => b.submit('a', x));
    const other = b.submit('b', 9);
    await tick();
    assert.deepEqual(
      c.batches.map((x) => `${x.key}${x.items}`),
      ['a1', 'a2', 'b9'],
    );
    c.batches[2]!.finish();
    assert.equal(await other, 'b:9', 'key b finished while key a was saturated');
    c.batches[0]!.finish();
    await ps[0];
    await tick();
    assert.deepEqual(
      c.batches.map((x) => `${x.key}${x.items}`),
      ['a1', 'a2', 'b9', 'a3'],
    );
    c.batches[1]!.finish();
    c.batches[3]!.finish();
    assert.deepEqual(await Promise.all(ps), ['a:1', 'a:2', 'a:3']);
  });

  it('rejects every item of a failed batch and those queued behind it (never sent), then works again', async () => {
    const c = controlled<number>();
    const b = new KeyedBatcher(c.run, { maxBatch: 10 });
    const failed = [1, 2].map((x) => b.submit('k', x));
    await tick();
    const queued = b.submit('k', 3);
    c.batches[0]!.finish(new Error('connection lost'));
    for (const p of [...failed, queued]) await assert.rejects(p, /connection lost/);
    assert.equal(c.batches.length, 1, 'the queued item was never run');
    assert.equal(b.pending, 0);
    const next = b.submit('k', 4);
    await tick();
    c.batches[1]!.finish();
    assert.equal(await next, 'k:4');
  });

  it('rejects a batch whose run returns the wrong number of results', async () => {
    const b = new KeyedBatcher<number, number>(async (_k, items) => items.slice(1), { maxBatch: 10 });
    const ps = [1, 2].map((x) => b.submit('k', x));
    for (const p of ps) await assert.rejects(p, /returned 1 results for 2 items/);
  });

  it('refuses a maxBatch or maxInFlight below 1', () => {
    assert.throws(() => new KeyedBatcher(async () => [], { maxBatch: 0 }), RangeError);
    assert.throws(() => new KeyedBatcher(async () => [], { maxBatch: 1, maxInFlight: 0 }), RangeError);
  });

  it('property: every item gets its own result exactly once; limits hold under any schedule', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.nat(3)), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 3 }), async (plan, maxBatch, maxInFlight) => {
        const running = new Map<string, number>();
        let violation = '';
        const b = new KeyedBatcher<number, number>(
          async (key, items) => {
            const n = (running.get(key) ?? 0) + 1;
            running.set(key, n);
            if (n > maxInFlight) violation = `${n} batches of ${key} in flight`;
            if (items.length > maxBatch) violation = `batch of ${items.length}`;
            await new Promise((r) => setTimeout(r, items[0]! % 3));
            running.set(key, running.get(key)! - 1);
            return items.map((x) => x * 2);
          },
          { maxBatch, maxInFlight },
        );
        const ps: Promise<number>[] = [];
        let id = 0;
        for (const [key, pause] of plan) {
          ps.push(b.submit(key, id++));
          if (pause > 0) await new Promise((r) => setTimeout(r, pause - 1));
        }
        const out = await Promise.all(ps);
        assert.equal(violation, '');
        assert.deepEqual(
          out,
          plan.map((_, i) => i * 2),
        );
        assert.equal(b.pending, 0);
      }),
      { numRuns: 60 },
    );
  });
});
