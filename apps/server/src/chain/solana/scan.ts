/**
 * Signature paging (getSignaturesForAddress) and the in-memory follower that turns new signatures
 * of watched addresses into decoded transfers, then reports each one again once it is finalized.
 * The caller persists `cursors()` (the newest signature seen per address) to resume after downtime:
 * the pages between the cursor and the head are walked with `before`, so nothing is skipped however
 * long the process was down.
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
 * Every signature of `address` newer than `until` (exclusive), OLDEST first, at `commitment`.
 * Pages of `pageSize` (the RPC's max is 1000) walking backwards with `before`.
 */
export async function signaturesSince(
  rpc: SolanaRpc,
  address: string,
  opts: { until?: string | undefined; commitment: 'confirmed' | 'finalized'; pageSize?: number; maxPages?: number },
): Promise<SignatureInfo[]> {
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

  constructor(
    private readonly rpc: SolanaRpc,
    private readonly confirm: 'confirmed' | 'finalized',
    private readonly events: FollowerEvents,
  ) {}

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
