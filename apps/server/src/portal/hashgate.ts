// A bound on the password hashing of one process. scrypt costs ~32 MiB and ~60-200 ms of a core per
// hash (passwords.ts), so unbounded concurrent sign-ins from many addresses are a denial of
// service: 40 queued hashes once made a legitimate sign-in take 6.7 s. The gate runs at most
// `concurrency` hashes at once and lets at most `queue` more wait (a sign-in let in waits at most
// (queue + 1) hashes, ~0.5-0.9 s on the reference machine); anything beyond is refused at
// once (the route answers 429 auth_busy with Retry-After), so waiting never grows.
//
// Who waits is chosen by how much each client address asked lately (requests in the last minute,
// counted here, in process memory, refused ones included): the next place goes to the waiting
// entry whose address asked least so far, and a newcomer that asked less than the worst waiting
// entry takes its place (that one is refused). One client with
// many requests can therefore not crowd out a person signing in from another address; each
// address also holds at most `perAddress` places. What no gate can tell apart is a botnet whose
// every address asks once — those requests look like people, and a full line refuses them and the
// person alike, quickly (docs/portal.md says so).
export interface HashGateOptions {
  /**
   * hashes running at once. 1: the request path (HTTP, PGlite) needs the other core of the 2-core
   * reference machine, and two hashes side by side each take twice as long on a loaded one, so a
   * person let in next waits for one hash, not two (measured: 2.3 s with 2, see BENCHMARKS.md).
   * ~10 sign-ins a second per process is far more than a portal needs.
   */
  concurrency?: number;
  /** requests waiting beyond those */
  queue?: number;
  /** places (running or waiting) one address may hold */
  perAddress?: number;
  /** how long a request counts against its address */
  windowMs?: number;
}

export const BUSY = Symbol('hash gate busy');

/** A request counted against its client address; `score` = its requests in the window so far. */
export interface Ticket {
  address: string;
  score: number;
}

interface Waiting {
  address: string;
  seq: number;
  start: () => void;
  refuse: () => void;
}

/** Addresses tracked at most; beyond, the oldest windows are dropped (bounded memory). */
const MAX_TRACKED = 10_000;

export class HashGate {
  readonly concurrency: number;
  readonly queue: number;
  readonly perAddress: number;
  private readonly windowMs: number;
  private running = 0;
  private started = 0;
  private seq = 0;
  private readonly waiting: Waiting[] = [];
  private readonly held = new Map<string, number>();
  private readonly recent = new Map<string, { n: number; since: number }>();
  private readonly now: () => number;

  constructor(o: HashGateOptions = {}, now: () => number = Date.now) {
    this.now = now;
    this.concurrency = o.concurrency ?? 1;
    this.queue = o.queue ?? 8;
    this.perAddress = o.perAddress ?? 2;
    this.windowMs = o.windowMs ?? 60_000;
  }

  /** Hashes running and waiting right now, and started since the process began (metrics and tests). */
  get load(): { running: number; waiting: number; started: number } {
    return { running: this.running, waiting: this.waiting.length, started: this.started };
  }

  /** Counts a request against its address (once per request): what `refuses` and `run` take. */
  ticket(address: string): Ticket {
    return { address, score: this.count(address) };
  }

  /**
   * Whether `run` would refuse this ticket right now: the routes ask before any database work, so
   * a refused flood costs the database nothing either.
   */
  refuses(t: Ticket): boolean {
    if ((this.held.get(t.address) ?? 0) >= this.perAddress) return true;
    if (this.running < this.concurrency || this.waiting.length < this.queue) return false;
    return this.current(this.waiting[this.worst()]!.address) <= this.current(t.address);
  }

  /** Runs `fn` when a place is free, or answers BUSY at once (or when a quieter newcomer evicts it). */
  async run<T>(t: Ticket | string, fn: () => Promise<T>): Promise<T | typeof BUSY> {
    const { address } = typeof t === 'string' ? this.ticket(t) : t;
    if ((this.held.get(address) ?? 0) >= this.perAddress) return BUSY;
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queue) {
        // The waiting entry whose address asked most by now (the latest on a tie) leaves, if it asked more.
        const worst = this.worst();
        if (this.current(this.waiting[worst]!.address) <= this.current(address)) return BUSY;
        this.waiting.splice(worst, 1)[0]!.refuse();
      }
      this.hold(address, 1);
      const admitted = await new Promise<boolean>((resolve) => {
        this.waiting.push({ address, seq: this.seq++, start: () => resolve(true), refuse: () => resolve(false) });
      });
      if (!admitted) {
        this.hold(address, -1);
        return BUSY;
      }
    } else {
      this.hold(address, 1);
      this.running++;
    }
    this.started++;
    try {
      return await fn();
    } finally {
      this.hold(address, -1);
      // The place passes straight to the quietest address waiting (by its count NOW: an entry
      // that queued early in a flood falls behind once its address keeps asking), first come
      // first on a tie; `running` stays as it is.
      if (this.waiting.length > 0) this.waiting.splice(this.best(), 1)[0]!.start();
      else this.running--;
    }
  }

  /** Requests of `address` in its current window (0 once the window passed). */
  private current(address: string): number {
    const r = this.recent.get(address);
    return r && this.now() - r.since < this.windowMs ? r.n : 0;
  }

  /** The waiting request with the fewest recent requests of its address, then the oldest. */
  private best(): number {
    return this.rank(1);
  }

  /** The waiting request with the most recent requests of its address, then the newest. */
  private worst(): number {
    return this.rank(-1);
  }

  /** Index of the waiting request ranked first: by recent requests of its address, then by age; `dir` -1 reverses both. */
  private rank(dir: 1 | -1): number {
    let b = 0;
    for (let i = 1; i < this.waiting.length; i++) {
      const w = this.waiting[i]!;
      const x = this.waiting[b]!;
      const d = this.current(w.address) - this.current(x.address) || w.seq - x.seq;
      if (d * dir < 0) b = i;
    }
    return b;
  }

  private hold(address: string, d: number): void {
    const n = (this.held.get(address) ?? 0) + d;
    if (n > 0) this.held.set(address, n);
    else this.held.delete(address);
  }

  /** Counts this request against its address; returns the count in the current window. */
  private count(address: string): number {
    const now = this.now();
    const r = this.recent.get(address);
    if (r && now - r.since < this.windowMs) {
      r.n++;
      return r.n;
    }
    if (r) this.recent.delete(address);
    if (this.recent.size >= MAX_TRACKED) {
      // Map order is insertion order: the first entries are the oldest windows.
      for (const [k, v] of this.recent) {
        if (this.recent.size < MAX_TRACKED && now - v.since < this.windowMs) break;
        this.recent.delete(k);
      }
    }
    this.recent.set(address, { n: 1, since: now });
    return 1;
  }
}
