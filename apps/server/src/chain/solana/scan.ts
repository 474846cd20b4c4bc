/**
 * Signature paging (getSignaturesForAddress): `catchUp`, the watcher's durable, bounded reading of
 * one address (nothing skipped however long the backlog), `signaturesSince` (the newest pages), and
 * the in-memory follower that turns new signatures of watched addresses into decoded transfers,
 * then reports each one again once it is finalized.
 */
import type { Signature } from '@solana/kit';
import { decodeTransfers, type JsonTransaction, type SolanaTransfer } from './decode.ts';
import type { SolanaRpc } from './rpc.ts';

export interface SignatureInfo {
  signature: string;
  slot: bigint;
  err: unknown;
}

/**
 * The signatures of `address` newer than `until` (exclusive), OLDEST first, at `commitment`, from
 * at most `maxPages` pages of `pageSize` (the RPC's max is 1000) walking backwards with `before`:
 * with a longer history only the NEWEST pages (a lookup of recent activity; the watcher reads with
 * `catchUp`, which never skips).
 */
export async function signaturesSince(rpc: SolanaRpc, address: string, opts: { until?: string | undefined; commitment: 'confirmed' | 'finalized'; pageSize?: number; maxPages?: number }): Promise<SignatureInfo[]> {
  const pageSize = opts.pageSize ?? 1000;
  const out: SignatureInfo[] = [];
  let before: string | undefined;
  for (let page = 0; page < (opts.maxPages ?? 100); page++) {
    const list = await rpc
      .getSignaturesForAddress(address as never, {
        commitment: opts.commitment,
        limit: pageSize,
        ...(before ? { before: before as Signature } : {}),
        ...(opts.until ? { until: opts.until as Signature } : {}),
      })
      .send();
    for (const s of list) out.push({ signature: s.signature, slot: s.slot, err: s.err });
    if (list.length < pageSize) break;
    before = list[list.length - 1]!.signature;
  }
  return out.reverse();
}

/** One followed address's durable reading position (solana_cursors). */
export interface AddressCursor {
  /** every signature up to this one (inclusive) is processed; undefined: none yet (the whole history) */
  until: string | undefined;
  /**
   * The unfinished walk down to `until`, as the `before` boundaries of the full pages read so far,
   * newest first: each is the oldest signature of a page whose older neighbours were not known to
   * end at `until`. Empty when the last tick caught up.
   */
  pages: string[];
  /**
   * The boundary popped last (the page just below it was processed, so `until` lies right below
   * it): a full page ending at it is complete. Durable, so a tick with few calls left still makes
   * progress (no probe of the empty range below it is needed).
   */
  end?: string | undefined;
}

/**
 * Reads `address` from its cursor towards the head, at most `maxPages` getSignaturesForAddress
 * calls per call (a tick), OLDEST signature first, and never skips one however large the backlog:
 *  - walking down: a full page from `before = pages.top` (the head when empty) may not reach
 *    `until`, so its oldest signature is pushed (`savePages`, durable) and the walk goes on below it,
 *    across ticks if need be, without processing anything yet;
 *  - a page that reaches `until` (shorter than `pageSize`, or ending at `end`, the boundary popped
 *    last, below which everything is handled) is complete: its signatures are handed to `process`
 *    oldest first (the caller advances `until` with each, in the same transaction as its records),
 *    then the boundary is popped (`end`) and the page above it is read the same way.
 * So `until` only ever moves over signatures that were processed, with every older one processed
 * before. A crash anywhere resumes from the saved state: a boundary pushed again (its page was
 * processed but the pop not saved) reads an empty page below it; a page processed halfway restarts
 * after its last processed signature (a short page). Every call makes progress (a push, or a page
 * processed), so any `maxPages` >= 1 reaches the head.
 * `process` answers false to stop (a listed transaction the node does not serve yet): retried next
 * tick. Returns `done` when the address is caught up to the head as of this call, `more` when this
 * call's pages ran out before (a backlog: read on at once), `wait` when `process` stopped.
 */
export async function catchUp(
  rpc: SolanaRpc,
  address: string,
  cursor: AddressCursor,
  opts: { commitment: 'confirmed' | 'finalized'; pageSize: number; maxPages: number },
  io: { savePages(pages: string[], end: string | undefined): Promise<void>; process(s: SignatureInfo): Promise<boolean> },
): Promise<'done' | 'more' | 'wait'> {
  const pages = [...cursor.pages];
  let until = cursor.until;
  let end = cursor.end;
  for (let calls = 0; calls < opts.maxPages; calls++) {
    const before = pages[pages.length - 1];
    const list = await rpc
      .getSignaturesForAddress(address as never, {
        commitment: opts.commitment,
        limit: opts.pageSize,
        ...(before ? { before: before as Signature } : {}),
        ...(until ? { until: until as Signature } : {}),
      })
      .send();
    const oldest = list[list.length - 1]?.signature;
    if (list.length >= opts.pageSize && oldest !== end) {
      pages.push(oldest!);
      await io.savePages(pages, (end = undefined));
      continue;
    }
    for (let i = list.length - 1; i >= 0; i--) {
      const s = list[i]!;
      if (!(await io.process({ signature: s.signature, slot: s.slot, err: s.err }))) return 'wait';
      until = s.signature;
    }
    if (pages.length === 0) {
      if (end !== undefined) await io.savePages(pages, undefined);
      return 'done';
    }
    end = pages.pop();
    await io.savePages(pages, end);
  }
  return 'more';
}

export async function fetchTransfers(rpc: SolanaRpc, signature: string, commitment: 'confirmed' | 'finalized'): Promise<SolanaTransfer[] | undefined> {
  const tx = await rpc.getTransaction(signature as Signature, { commitment, encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
  if (!tx) return undefined;
  return decodeTransfers(signature, tx as unknown as JsonTransaction);
}

export interface FollowerEvents {
  /** a transfer in a transaction that reached the confirm commitment */
  confirmed(t: SolanaTransfer): void | Promise<void>;
  /** a previously confirmed transaction reached `finalized` */
  finalized(signature: string): void | Promise<void>;
}

/**
 * Follows a set of addresses. `tick()` reads new signatures at the confirm level, decodes their
 * transfers (each signature once, whichever watched address it came from), then asks
 * getSignatureStatuses about the pending ones and reports those now finalized.
 */
export class SignatureFollower {
  readonly #cursor = new Map<string, string | undefined>();
  readonly #seen = new Set<string>();
  readonly #pending = new Set<string>();
  private readonly rpc: SolanaRpc;
  private readonly confirm: 'confirmed' | 'finalized';
  private readonly events: FollowerEvents;

  constructor(rpc: SolanaRpc, confirm: 'confirmed' | 'finalized', events: FollowerEvents) {
    this.rpc = rpc;
    this.confirm = confirm;
    this.events = events;
  }

  /** Starts following `address` after `cursor` (a signature: resume; undefined: its whole history). */
  watch(address: string, cursor?: string): void {
    if (!this.#cursor.has(address)) this.#cursor.set(address, cursor);
  }

  unwatch(address: string): void {
    this.#cursor.delete(address);
  }

  cursors(): Map<string, string | undefined> {
    return new Map(this.#cursor);
  }

  pending(): string[] {
    return [...this.#pending];
  }

  async tick(): Promise<{ transfers: number; finalized: number }> {
    let transfers = 0;
    for (const [address, until] of this.#cursor) {
      const sigs = await signaturesSince(this.rpc, address, { until, commitment: this.confirm });
      for (const s of sigs) {
        if (!this.#seen.has(s.signature) && s.err === null) {
          const list = await fetchTransfers(this.rpc, s.signature, this.confirm);
          if (list === undefined) break; // not served yet at this level: retry from here next tick
          for (const t of list) await this.events.confirmed(t);
          transfers += list.length;
          this.#seen.add(s.signature);
          if (this.confirm !== 'finalized') this.#pending.add(s.signature);
          else await this.events.finalized(s.signature);
        }
        this.#cursor.set(address, s.signature);
      }
    }
    let finalized = 0;
    const pending = [...this.#pending];
    for (let i = 0; i < pending.length; i += 256) {
      const batch = pending.slice(i, i + 256);
      const { value } = await this.rpc.getSignatureStatuses(batch as Signature[]).send();
      for (let j = 0; j < batch.length; j++) {
        if (value[j]?.confirmationStatus === 'finalized') {
          await this.events.finalized(batch[j]!);
          this.#pending.delete(batch[j]!);
          finalized++;
        }
      }
    }
    return { transfers, finalized };
  }
}

/** The newest signature of `address` (a cursor that starts following it from now), or undefined when it has none. */
export async function newestSignature(rpc: SolanaRpc, address: string): Promise<string | undefined> {
  const [s] = await rpc.getSignaturesForAddress(address as never, { commitment: 'confirmed', limit: 1 }).send();
  return s?.signature;
}
