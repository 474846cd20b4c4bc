/**
 * The Solana JSON-RPC methods the gateway's watcher and the payer tooling call, answered from the
 * ledger, plus `svm_*` control methods for tests (advance slots, drop or delay the next
 * transactions). Unknown methods answer -32601 like a node that does not serve them.
 */
import { getBase58Encoder, getBase64Encoder, getCompiledTransactionMessageDecoder, type Address } from '@solana/kit';
import { readTokenAccount, uiTokenAmount, isTokenProgram } from './codec.ts';
import type { Ledger, Commitment } from './ledger.ts';
import { accountJson, transactionJson, type Encoding } from './views.ts';

export class RpcError extends Error {
  readonly code: number;
  readonly data?: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

type Params = unknown[];
type Cfg = { commitment?: Commitment; encoding?: Encoding; [k: string]: unknown };

const b58e = getBase58Encoder();
const b64e = getBase64Encoder();
const msgDecoder = getCompiledTransactionMessageDecoder();
/** Blocks a blockhash stays valid for, as on the cluster. */
const BLOCKHASH_VALIDITY = 150n;

function cfg(p: unknown): Cfg {
  return p && typeof p === 'object' && !Array.isArray(p) ? (p as Cfg) : {};
}

function str(p: unknown, name: string): string {
  if (typeof p !== 'string') throw new RpcError(-32602, `Invalid params: ${name} must be a string`);
  return p;
}

function wireOf(p: unknown, encoding: unknown): Uint8Array {
  const s = str(p, 'transaction');
  try {
    return encoding === 'base64' ? Uint8Array.from(b64e.encode(s)) : Uint8Array.from(b58e.encode(s));
  } catch {
    throw new RpcError(-32602, 'invalid transaction: failed to deserialize');
  }
}

/** getTransaction and getSignaturesForAddress refuse `processed`, as a node does. */
function atLeastConfirmed(c: Commitment | undefined): Commitment {
  if (c === 'processed') throw new RpcError(-32602, 'Method does not support commitment below `confirmed`');
  return c ?? 'finalized';
}

export interface RpcContext {
  ledger: Ledger;
  genesisHash: string;
}

export function handle(ctx: RpcContext, method: string, params: Params): unknown {
  const { ledger } = ctx;
  const context = (c?: Commitment) => ({ slot: ledger.slotAt(c ?? 'finalized'), apiVersion: '2.2.0' });
  const decimalsOf = (m: Address) => ledger.decimalsOf(m);
  switch (method) {
    case 'getHealth':
      return 'ok';
    case 'getVersion':
      return { 'solana-core': '2.2.0-tollgate-svm', 'feature-set': 0 };
    case 'getGenesisHash':
      return ctx.genesisHash;
    case 'getSlot':
    case 'getBlockHeight':
      // One block per slot: the local chain never skips a slot, so height and slot coincide.
      return ledger.slotAt(cfg(params[0]).commitment);
    case 'getEpochInfo': {
      const slot = ledger.slotAt(cfg(params[0]).commitment);
      return { absoluteSlot: slot, blockHeight: slot, epoch: 0n, slotIndex: slot, slotsInEpoch: 432000n, transactionCount: null };
    }
    case 'getLatestBlockhash': {
      const c = cfg(params[0]).commitment;
      return { context: context(c), value: { blockhash: ledger.svm.latestBlockhash(), lastValidBlockHeight: ledger.slotAt(c ?? 'finalized') + BLOCKHASH_VALIDITY } };
    }
    case 'isBlockhashValid':
      return { context: context(cfg(params[1]).commitment), value: str(params[0], 'blockhash') === ledger.svm.latestBlockhash() };
    case 'getMinimumBalanceForRentExemption':
      return ledger.svm.minimumBalanceForRentExemption(BigInt(Number(params[0] ?? 0)));
    case 'getFeeForMessage': {
      const bytes = wireOf(params[0], 'base64');
      const m = msgDecoder.decode(bytes);
      return { context: context(cfg(params[1]).commitment), value: 5000n * BigInt(m.header.numSignerAccounts) };
    }
    case 'getBalance':
      return { context: context(cfg(params[1]).commitment), value: ledger.lamportsOf(str(params[0], 'address') as Address) };
    case 'getAccountInfo': {
      const c = cfg(params[1]);
      return { context: context(c.commitment), value: account(ledger, str(params[0], 'address'), c.encoding ?? 'base64', sliceOf(c)) };
    }
    case 'getMultipleAccounts': {
      const c = cfg(params[1]);
      const list = Array.isArray(params[0]) ? params[0] : [];
      return { context: context(c.commitment), value: list.map((a) => account(ledger, str(a, 'address'), c.encoding ?? 'base64', sliceOf(c))) };
    }
    case 'getTokenAccountBalance': {
      const acc = ledger.svm.getAccount(str(params[0], 'address') as Address);
      const t = acc.exists && isTokenProgram(acc.programAddress) ? readTokenAccount(acc.data) : undefined;
      if (!t) throw new RpcError(-32602, 'Invalid param: could not find account');
      return { context: context(cfg(params[1]).commitment), value: uiTokenAmount(t.amount, ledger.decimalsOf(t.mint) ?? 0) };
    }
    case 'getTokenAccountsByOwner': {
      const owner = str(params[0], 'owner');
      const filter = cfg(params[1]) as { mint?: string; programId?: string };
      const c = cfg(params[2]);
      const programs = filter.programId ? [filter.programId] : ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb'];
      const value = programs.flatMap((p) =>
        ledger.svm
          .getProgramAccounts(p as Address)
          .filter((a) => {
            const t = readTokenAccount(Uint8Array.from(a.data));
            return t && t.owner === owner && (!filter.mint || t.mint === filter.mint);
          })
          .map((a) => ({ pubkey: a.address, account: accountJson({ ...a, data: Uint8Array.from(a.data) }, c.encoding ?? 'base64', decimalsOf) })),
      );
      return { context: context(c.commitment), value };
    }
    case 'requestAirdrop':
      return ledger.airdrop(str(params[0], 'address') as Address, BigInt(params[1] as number));
    case 'sendTransaction': {
      const c = cfg(params[1]);
      const wire = wireOf(params[0], c.encoding ?? 'base58');
      if (!c.skipPreflight) {
        const sim = ledger.simulate(wire);
        if (sim.err !== null) {
          throw new RpcError(-32002, `Transaction simulation failed: ${JSON.stringify(sim.err)}`, {
            err: sim.err,
            logs: sim.logs,
            accounts: null,
            unitsConsumed: sim.unitsConsumed,
            returnData: null,
          });
        }
      }
      return ledger.submit(wire);
    }
    case 'simulateTransaction': {
      const c = cfg(params[1]);
      const sim = ledger.simulate(wireOf(params[0], c.encoding ?? 'base58'));
      return { context: context(c.commitment), value: { err: sim.err, logs: sim.logs, accounts: null, unitsConsumed: sim.unitsConsumed, returnData: null } };
    }
    case 'getSignatureStatuses': {
      const sigs = Array.isArray(params[0]) ? params[0] : [];
      if (sigs.length > 256) throw new RpcError(-32602, 'Too many inputs provided; max 256');
      return {
        context: context('processed'),
        value: sigs.map((s) => {
          const st = ledger.status(str(s, 'signature'));
          if (!st) return null;
          const level = ledger.statusOf(st.slot);
          return {
            slot: st.slot,
            confirmations: level === 'finalized' ? null : ledger.slot - st.slot,
            err: st.err,
            status: st.err === null ? { Ok: null } : { Err: st.err },
            confirmationStatus: level,
          };
        }),
      };
    }
    case 'getSignaturesForAddress': {
      const c = cfg(params[1]) as Cfg & { limit?: number; before?: string; until?: string };
      const limit = c.limit ?? 1000;
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new RpcError(-32602, 'Invalid limit; max 1000');
      const list = ledger.signaturesFor(str(params[0], 'address'), {
        limit,
        commitment: atLeastConfirmed(c.commitment),
        ...(c.before ? { before: c.before } : {}),
        ...(c.until ? { until: c.until } : {}),
      });
      return list.map((r) => ({
        signature: r.signature,
        slot: r.slot,
        err: r.err,
        memo: null,
        blockTime: r.blockTime,
        confirmationStatus: ledger.statusOf(r.slot),
      }));
    }
    case 'getTransaction': {
      const c = cfg(params[1]) as Cfg & { maxSupportedTransactionVersion?: number };
      const commitment = atLeastConfirmed(c.commitment);
      const r = ledger.transaction(str(params[0], 'signature'));
      if (!r || r.slot > ledger.slotAt(commitment)) return null;
      const version = msgDecoder.decode(ledger.decode(r.wire).messageBytes).version;
      if (version !== 'legacy' && c.maxSupportedTransactionVersion === undefined) {
        throw new RpcError(-32015, `Transaction version (${version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0`);
      }
      return transactionJson(r, c.encoding ?? 'json', version, decimalsOf);
    }
    // ---- control methods (not Solana's): tests and the dev profile drive faults and time ----
    case 'svm_advanceSlots':
      ledger.advance(Number(params[0] ?? 1));
      return ledger.slot;
    case 'svm_dropNext':
      ledger.dropNext(Number(params[0] ?? 1));
      return null;
    case 'svm_delayNext':
      ledger.delayNext(Number(params[0] ?? 1000), Number(params[1] ?? 1));
      return null;
    case 'svm_expireBlockhash':
      ledger.svm.expireBlockhash();
      return ledger.svm.latestBlockhash();
    default:
      throw new RpcError(-32601, 'Method not found');
  }
}

function account(ledger: Ledger, address: string, encoding: Encoding, slice?: { offset: number; length: number }) {
  const acc = ledger.svm.getAccount(address as Address);
  if (!acc.exists) return null;
  const data = Uint8Array.from(acc.data);
  // dataSlice (binary encodings only, as on a node): part of the data, e.g. a token account's amount.
  const sliced = slice && encoding !== 'jsonParsed' ? data.subarray(slice.offset, slice.offset + slice.length) : data;
  return { ...accountJson({ ...acc, data: sliced }, encoding, (m) => ledger.decimalsOf(m)), space: data.length };
}

function sliceOf(c: Cfg): { offset: number; length: number } | undefined {
  const s = c.dataSlice as { offset?: unknown; length?: unknown } | undefined;
  if (s === undefined) return undefined;
  if (!Number.isInteger(s.offset) || !Number.isInteger(s.length) || (s.offset as number) < 0 || (s.length as number) < 0) throw new RpcError(-32602, 'Invalid params: dataSlice');
  return { offset: s.offset as number, length: s.length as number };
}
