/**
 * Which followed addresses a tick reads with getSignaturesForAddress. That call takes ONE address,
 * so following 10,000 merchant token accounts cost 10,000 calls per tick, one after the other: at a
 * provider's ~30 ms a call a tick lasted minutes (bench/solana-scale.ts). Beyond `minReads`
 * addresses a tick first asks getMultipleAccounts (up to 100 addresses per call) for each account's
 * token amount and lamports, and reads only:
 *  - the accounts whose amount or lamports changed since they were last read to their end (a
 *    payment always changes the amount: an order is never for 0), or that were never read;
 *  - the accounts the caller must read anyway (an unfinished backlog walk);
 *  - in rotation, the accounts read longest ago, max(`minReads`, followed / `cycleTicks`) per tick,
 *    so every account is read to its end at least once every `cycleTicks` ticks.
 * The rotation covers what an amount cannot show: a payment and an outgoing transfer of the same
 * amount between two ticks (a wallet that forwards each deposit at once) leave the amount as it
 * was. Such a payment is found by the account's next rotation read; until then `readThrough` (the
 * oldest last full read over the followed accounts, what the expiry sweeper relies on) has not
 * passed it, so its order is not expired meanwhile. With `minReads` or fewer addresses every one is
 * read every tick, as before.
 */
import type { Address } from '@solana/kit';
import { mapLimit } from '../evm/context.ts';
import type { SolanaRpc } from './rpc.ts';

/** getMultipleAccounts' maximum. */
const ACCOUNTS_PER_QUERY = 100;
/** An SPL token account's amount: u64 at byte 64 (after mint and owner); the same in Token-2022. */
const AMOUNT_SLICE = { offset: 64, length: 8 };

interface ReadMark {
  slot: bigint;
  at: Date;
}

export class AccountProbe {
  /** address → amount and lamports as the probe saw them before the last read to the end */
  readonly #seen = new Map<string, string>();
  /** address → the tick (slot, time) of its last read to the end */
  readonly #lastRead = new Map<string, ReadMark>();
  /** this tick's probe, committed per address by `read()` */
  #probed = new Map<string, string>();
  private readonly opts: { minReads: number; cycleTicks: number };

  constructor(opts: { minReads: number; cycleTicks: number }) {
    this.opts = opts;
  }

  /**
   * The addresses to read this tick, in `followed`'s order with the changed ones first (a payment
   * is detected before the rotation's reads); `mustRead` are read whatever the probe says.
   */
  async select(rpc: SolanaRpc, followed: readonly string[], mustRead: ReadonlySet<string>, commitment: 'confirmed' | 'finalized'): Promise<string[]> {
    const current = new Set(followed);
    for (const a of this.#seen.keys()) if (!current.has(a)) this.#seen.delete(a);
    for (const a of this.#lastRead.keys()) if (!current.has(a)) this.#lastRead.delete(a);
    this.#probed = new Map();
    const rotation = Math.max(this.opts.minReads, Math.ceil(followed.length / Math.max(1, this.opts.cycleTicks)));
    if (followed.length <= rotation) return [...followed];

    const changed = new Set<string>(mustRead);
    const chunks: string[][] = [];
    for (let i = 0; i < followed.length; i += ACCOUNTS_PER_QUERY) chunks.push(followed.slice(i, i + ACCOUNTS_PER_QUERY));
    // A few calls in flight: the probe is read-only, and its latency is the detection's.
    const answers = await mapLimit(chunks, 4, (chunk) => rpc.getMultipleAccounts(chunk as Address[], { commitment, encoding: 'base64', dataSlice: AMOUNT_SLICE }).send());
    chunks.forEach((chunk, i) => {
      const { value } = answers[i]!;
      chunk.forEach((a, j) => {
        const acc = value[j];
        const fingerprint = acc ? `${acc.data[0]}:${acc.lamports}` : 'none';
        this.#probed.set(a, fingerprint);
        if (this.#seen.get(a) !== fingerprint) changed.add(a);
      });
    });
    const never = -1n;
    const due = [...followed]
      .filter((a) => !changed.has(a))
      .sort((x, y) => {
        const a = this.#lastRead.get(x)?.slot ?? never;
        const b = this.#lastRead.get(y)?.slot ?? never;
        return a < b ? -1 : a > b ? 1 : 0;
      })
      .slice(0, rotation);
    return [...followed.filter((a) => changed.has(a)), ...due];
  }

  /** `address` was read to its end in the tick of `mark`: what this tick's probe saw is now known. */
  read(address: string, mark: ReadMark): void {
    const fingerprint = this.#probed.get(address);
    if (fingerprint !== undefined) this.#seen.set(address, fingerprint);
    this.#lastRead.set(address, mark);
  }

  /**
   * The tick up to which every address of `followed` has been read to its end (the oldest last
   * read), or undefined while one never was.
   */
  readThrough(followed: readonly string[]): ReadMark | undefined {
    let oldest: ReadMark | undefined;
    for (const a of followed) {
      const r = this.#lastRead.get(a);
      if (!r) return undefined;
      if (!oldest || r.slot < oldest.slot) oldest = r;
    }
    return oldest;
  }
}
