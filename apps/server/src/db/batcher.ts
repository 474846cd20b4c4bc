/**
 * Group commit for hot write paths: items submitted while a batch of the same key is in flight
 * wait and go together in the next one, so N concurrent requests cost one statement and one
 * commit instead of N. There is no timer: an idle key runs its first item at the next turn of the
 * event loop (`setImmediate`, which collects the requests parsed in the same I/O phase), so a
 * quiet gateway answers as fast as before and a busy one amortizes.
 *
 * At most `maxInFlight` batches per key run at once; the others wait and grow. Order creation uses
 * one key and one batch in flight (orders/create-batch.ts: concurrent batches would queue on the
 * fee-balance rows, and smaller batches cost more per order). Keys are independent and run
 * concurrently (bounded by the connection pool).
 *
 * `run` gets the items in submission order and returns one result per item, in the same order. A
 * throw rejects every item of the batch, and the items queued behind it, with that error; callers
 * that can tell a bad item from a bad batch retry item by item inside `run` (see
 * orders/create-batch.ts), so a throw means the database itself failed.
 */
export interface BatcherOptions {
  /** Most items per batch (bounds statement size and the latency added to the last item). */
  maxBatch: number;
  /** Batches of one key in flight at once (default 1). */
  maxInFlight?: number;
}

/** What a batcher has done since it was built (the Prometheus counters of http/observability.ts). */
export interface BatchStats {
  /** Batches run (statements sent). */
  batches: number;
  /** Items those batches carried; `items / batches` is the mean batch size. */
  items: number;
  /** Items waiting for a batch right now. */
  queued: number;
}

interface Pending<I, O> {
  item: I;
  resolve: (o: O) => void;
  reject: (e: unknown) => void;
}

interface KeyState<I, O> {
  queue: Pending<I, O>[];
  inFlight: number;
  scheduled: boolean;
}

export class KeyedBatcher<I, O> {
  private readonly keys = new Map<string, KeyState<I, O>>();
  private readonly maxInFlight: number;
  private batches = 0;
  private items = 0;
  private readonly run: (key: string, items: I[]) => Promise<O[]>;
  private readonly opts: BatcherOptions;

  constructor(run: (key: string, items: I[]) => Promise<O[]>, opts: BatcherOptions) {
    this.run = run;
    this.opts = opts;
    this.maxInFlight = opts.maxInFlight ?? 1;
    if (!(opts.maxBatch >= 1) || !(this.maxInFlight >= 1)) throw new RangeError('maxBatch and maxInFlight must be at least 1');
  }

  submit(key: string, item: I): Promise<O> {
    let st = this.keys.get(key);
    if (!st) {
      st = { queue: [], inFlight: 0, scheduled: false };
      this.keys.set(key, st);
    }
    const p = new Promise<O>((resolve, reject) => st.queue.push({ item, resolve, reject }));
    if (st.inFlight < this.maxInFlight && !st.scheduled) {
      st.scheduled = true;
      setImmediate(() => {
        st.scheduled = false;
        this.launch(key, st);
      });
    }
    return p;
  }

  /** Items waiting for a batch, over all keys (for metrics and tests). */
  get pending(): number {
    let n = 0;
    for (const st of this.keys.values()) n += st.queue.length;
    return n;
  }

  stats(): BatchStats {
    return { batches: this.batches, items: this.items, queued: this.pending };
  }

  private launch(key: string, st: KeyState<I, O>): void {
    while (st.inFlight < this.maxInFlight && st.queue.length > 0) {
      st.inFlight++;
      const batch = st.queue.splice(0, this.opts.maxBatch);
      this.batches++;
      this.items += batch.length;
      void this.runBatch(key, st, batch);
    }
    // Drop idle keys so a gateway with many merchants does not keep one entry per merchant ever seen.
    if (st.inFlight === 0 && st.queue.length === 0 && !st.scheduled && this.keys.get(key) === st) this.keys.delete(key);
  }

  private async runBatch(key: string, st: KeyState<I, O>, batch: Pending<I, O>[]): Promise<void> {
    let results: O[] | undefined;
    let failure: unknown;
    try {
      results = await this.run(
        key,
        batch.map((p) => p.item),
      );
      if (results.length !== batch.length) failure = new Error(`batch returned ${results.length} results for ${batch.length} items`);
    } catch (err) {
      failure = err;
    }
    // A batch that failed whole (the database unreachable, a query timeout) fails the items queued
    // behind it too: they would only wait for the same outage, each adding its own timeout to the
    // one it waited for (found by db-outage.test.ts: 10 s answers behind a frozen server). They
    // were never sent, so failing them changes nothing.
    if (failure !== undefined) for (const p of st.queue.splice(0)) p.reject(failure);
    st.inFlight--;
    // What queued while this batch ran goes now, together, and goes before this batch is answered:
    // the database works on the next statement while the event loop writes these answers. The
    // order matters because answering is synchronous work (each handler resumes, serializes and
    // writes its response) and pg's pool sends a statement from a process.nextTick: settling in a
    // later nextTick lets the statement leave first. Measured with bench/ab.ts at 32 clients:
    // +15 % orders/s (two interleaved runs of 6 rounds, sides swapped). The previous batch has
    // committed by now, so the next one sees everything it wrote either way.
    this.launch(key, st);
    process.nextTick(() => batch.forEach((p, i) => (failure === undefined ? p.resolve(results![i]!) : p.reject(failure))));
  }
}
