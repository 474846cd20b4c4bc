import { BaseError, keccak256, parseTransaction, type Hex, type PublicClient } from 'viem';
import type { LocalAccount } from 'viem';
import type { ChainConfig } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import { processLog } from '../log.ts';
import { bumpFees, feeBumpConfig, reportFeeBump } from './fee-bump.ts';
import { finishAttempt, insertSettlement, type SettlementRecord } from './repo.ts';

export interface TrackerDeps {
  db: Database;
  chain: ChainConfig;
  client: PublicClient;
  account: LocalAccount;
  /** Sends a recorded row and marks it sent (the executor's step 3). */
  broadcast(rec: SettlementRecord): Promise<SettlementRecord>;
  /** Sends a row's bytes again ("already known" is success). */
  resend(rec: SettlementRecord): Promise<void>;
}

/**
 * Step 4 of the executor for one settlement: its attempts (the first transaction and its fee-bumped
 * replacements, all with ONE nonce, so the chain mines at most one) → which one was mined, and
 * whether it is final.
 *
 *   - an attempt has a receipt: it is the settlement's transaction. Reverted → failed; deep enough
 *     → confirmed; in both cases the other attempts become `replaced` in the same statement
 *     (repo.finishAttempt). Not deep yet → unchanged (a reorg may still swap it for a sibling);
 *   - none has one and the nonce is used on chain: something else took the nonce (another executor
 *     instance on a lost database) → failed, after reading the receipts once more;
 *   - none has one and the nonce is free: still in a mempool or dropped. The latest attempt is
 *     sent again (same bytes: harmless when it is in the pool, puts it back when it was dropped),
 *     or, once it has waited `after_seconds`, replaced: signed again with the same nonce, gas,
 *     target and data and higher fees (fee-bump.ts), RECORDED as the next attempt, then sent. A
 *     process killed between the two finds the new attempt pending and sends it; killed before
 *     the record, nothing was sent and the next pass bumps again. Two processes bumping at once
 *     collide on UNIQUE (chain, order, kind, attempt): one records, the other sends nothing.
 */
export class AttemptTracker {
  readonly #d: TrackerDeps;
  /** Rows whose capped bump was reported already (one metric increment and log line per attempt). */
  readonly #capped = new Set<number>();

  constructor(d: TrackerDeps) {
    this.#d = d;
  }

  /** `open`: the unfinished attempts of one settlement, by attempt. Returns its standing attempt. */
  async track(open: SettlementRecord[], opts: { sendPending: boolean }): Promise<SettlementRecord> {
    const { db, client, account } = this.#d;
    let latest = open[open.length - 1]!;
    if (latest.status === 'pending' && opts.sendPending) {
      try {
        latest = await this.#d.broadcast(latest);
      } catch (err) {
        // A sibling may be the one mined: read the receipts before giving up this pass.
        if (open.length === 1) throw err;
      }
    }
    let receipts = await Promise.all(open.map((a) => this.#receipt(a.txHash)));
    if (!receipts.some(Boolean)) {
      const used = await client.getTransactionCount({ address: account.address, blockTag: 'latest' });
      if (used <= latest.nonce) {
        // Not mined and the nonce is free: waiting in a mempool, or dropped (a reorg, a node restart).
        if (latest.status !== 'sent') return latest;
        if (latest.ageMs !== undefined && latest.ageMs >= feeBumpConfig(this.#d.chain.feeBump).afterMs) return this.#bump(latest);
        await this.#d.resend(latest);
        return latest;
      }
      // An RPC fault here throws (the rows stay as they are): only a definite "no receipt" fails them.
      receipts = await Promise.all(open.map((a) => this.#receipt(a.txHash)));
      if (!receipts.some(Boolean)) return (await finishAttempt(db, latest.id, 'failed', { failureReason: 'nonce used by another transaction' })) ?? latest;
    }
    const i = receipts.findIndex(Boolean);
    const winner = open[i]!;
    const receipt = receipts[i]!;
    const blockNumber = Number(receipt.blockNumber);
    if (receipt.status === 'reverted') return (await finishAttempt(db, winner.id, 'failed', { blockNumber, failureReason: 'reverted on chain' })) ?? winner;
    const head = await client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n < BigInt(Math.max(1, this.#d.chain.confirmations))) return winner;
    return (await finishAttempt(db, winner.id, 'confirmed', { blockNumber })) ?? winner;
  }

  async #bump(latest: SettlementRecord): Promise<SettlementRecord> {
    const { db, chain, client, account } = this.#d;
    const tx = parseTransaction(latest.rawTx);
    if (tx.type !== 'eip1559' || tx.maxFeePerGas === undefined || tx.maxPriorityFeePerGas === undefined || !tx.to || tx.gas === undefined) {
      await this.#d.resend(latest);
      return latest;
    }
    const cfg = feeBumpConfig(chain.feeBump);
    const plan = bumpFees({ maxFeePerGas: tx.maxFeePerGas, maxPriorityFeePerGas: tx.maxPriorityFeePerGas }, await client.estimateFeesPerGas(), cfg);
    if (plan.kind === 'capped') {
      if (!this.#capped.has(latest.id)) {
        this.#capped.add(latest.id);
        reportFeeBump({ chainId: chain.chainId, kind: latest.kind, outcome: 'capped' });
        // Public values only: which row, and the fees it would need (no key, no raw transaction).
        processLog.warn(
          {
            chain_id: chain.chainId,
            settlement_id: latest.id,
            kind: latest.kind,
            nonce: latest.nonce,
            attempt: latest.attempt,
            tx_hash: latest.txHash,
            wanted_max_fee_per_gas: plan.wanted.maxFeePerGas.toString(),
            max_fee_per_gas: plan.cap.toString(),
          },
          'settlement transaction stuck: its replacement would exceed fee_bump.max_fee_per_gas',
        );
      }
      await this.#d.resend(latest);
      return latest;
    }
    const rawTx = await account.signTransaction({
      type: 'eip1559',
      chainId: chain.chainId,
      nonce: latest.nonce,
      to: tx.to,
      data: tx.data ?? '0x',
      gas: tx.gas,
      ...plan.fees,
    });
    const rec = await insertSettlement(db, {
      chainId: latest.chainId,
      orderId: latest.orderId,
      kind: latest.kind,
      attempt: latest.attempt + 1,
      executor: account.address,
      nonce: latest.nonce,
      rawTx,
      txHash: keccak256(rawTx),
      epoch: latest.epoch,
    });
    // Another process recorded this attempt first: it sends its own; this one sends nothing.
    if (!rec) return latest;
    reportFeeBump({ chainId: chain.chainId, kind: latest.kind, outcome: 'bumped' });
    return this.#d.broadcast(rec);
  }

  /** The receipt, or undefined when the node has none; RPC faults throw. */
  #receipt(hash: Hex) {
    return this.#d.client.getTransactionReceipt({ hash }).catch((err: unknown) => {
      if (err instanceof BaseError && err.name === 'TransactionReceiptNotFoundError') return undefined;
      throw err;
    });
  }
}
