import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database, Queryable } from '../db/database.ts';
import { emitEvent } from '../webhooks/outbox.ts';

/**
 * x402 settlements as the merchant sees them: every settlement the facilitator performed whose
 * pay-to address is one of the merchant's wallets on that chain (the payment landed in its
 * wallet through this gateway), like its machine payments under /api/v1/mpp/payments. A
 * settlement made for a machine-payment challenge (`Payment` scheme `authorization` credential)
 * is that machine payment and is not listed again here.
 *
 * Statuses follow the executor's row: `pending` (recorded or sent), `confirmed` (the transaction
 * has the chain's `confirmations`, as the executor counts them), `failed` (reverted). `x402.settlement.confirmed` is emitted once
 * per settlement and merchant when it is confirmed (emitConfirmedEvents, from the worker).
 */
export interface X402SettlementView {
  settlement_id: string;
  network: string;
  chain_id: number;
  token_contract: string;
  token_symbol: string | null;
  payer: string;
  pay_to: string;
  amount_wei: string;
  tx_hash: string;
  status: 'pending' | 'confirmed' | 'failed';
  block_number: number | null;
  created_at: string;
}

interface Row {
  id: string;
  chain_id: number;
  token: string;
  payer: string;
  recipient: string;
  amount: string;
  created_at: Date;
  tx_hash: string;
  status: string;
  block_number: number | null;
}

const SELECT = `SELECT a.id, a.chain_id, a.token, a.payer, a.recipient, a.amount::text AS amount, a.created_at, s.tx_hash, s.status, s.block_number
  FROM x402_authorizations a JOIN settlements s ON s.chain_id = a.chain_id AND s.order_id = a.id AND s.kind = 'x402'
    -- the attempt that stands for the settlement (fee bumping, migration 0017): not replaced, the latest such
    AND s.status <> 'replaced'
    AND NOT EXISTS (SELECT 1 FROM settlements s2 WHERE s2.chain_id = s.chain_id AND s2.order_id = s.order_id AND s2.kind = s.kind AND s2.status <> 'replaced' AND s2.attempt > s.attempt)`;

function settlementView(r: Row, config: Config): X402SettlementView {
  const symbol = config.chains.find((c) => c.chainId === r.chain_id)?.tokens.find((t) => t.address.toLowerCase() === r.token)?.symbol ?? null;
  return {
    settlement_id: r.id,
    network: `eip155:${r.chain_id}`,
    chain_id: r.chain_id,
    token_contract: r.token,
    token_symbol: symbol,
    payer: r.payer,
    pay_to: r.recipient,
    amount_wei: r.amount,
    tx_hash: r.tx_hash,
    status: r.status === 'confirmed' ? 'confirmed' : r.status === 'failed' ? 'failed' : 'pending',
    block_number: r.block_number === null ? null : Number(r.block_number),
    created_at: r.created_at.toISOString(),
  };
}

/** The merchant's x402 settlements, newest first, keyset-paginated by `created_at`. */
export async function listSettlements(q: Queryable, config: Config, merchantId: string, limit: number, before?: Date): Promise<X402SettlementView[]> {
  const { rows } = await q.query<Row>(
    `${SELECT}
     WHERE a.challenge_id IS NULL
       AND (a.chain_id, a.recipient) IN (SELECT chain_id, address FROM merchant_wallets WHERE merchant_id = $1)
       AND ($2::timestamptz IS NULL OR a.created_at < $2)
     ORDER BY a.created_at DESC, a.id DESC LIMIT $3`,
    [merchantId, before ?? null, limit],
  );
  return rows.map((r) => settlementView(r, config));
}

/**
 * Emits `x402.settlement.confirmed` for confirmed settlements not announced yet, to every merchant
 * whose wallet is the pay-to address, and marks them announced in the same transaction (the
 * webhook outbox: the event exists exactly when the mark does). Rows are taken with SKIP LOCKED,
 * so workers in several processes share the work without announcing one twice. Returns how many
 * settlements were announced.
 */
export async function emitConfirmedEvents(db: Database, config: Config, clock: Clock, batch = 100): Promise<number> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<Row>(
      `${SELECT}
       WHERE a.notified_at IS NULL AND a.challenge_id IS NULL AND s.status = 'confirmed'
       ORDER BY a.created_at LIMIT $1 FOR UPDATE OF a SKIP LOCKED`,
      [batch],
    );
    const now = new Date(clock.now());
    for (const r of rows) {
      const merchants = await tx.query<{ merchant_id: string }>('SELECT DISTINCT merchant_id FROM merchant_wallets WHERE chain_id = $1 AND address = $2', [r.chain_id, r.recipient]);
      const payload = settlementView(r, config);
      for (const m of merchants.rows) await emitEvent(tx, { merchantId: m.merchant_id, event: 'x402.settlement.confirmed', payload, clockNow: now });
      await tx.query('UPDATE x402_authorizations SET notified_at = $2 WHERE id = $1', [r.id, now]);
    }
    return rows.length;
  });
}
