import type { Queryable } from '../db/database.ts';
import type { CompanionInsert } from '../settlement/repo.ts';

/** SQL of the x402 facilitator: claims of EIP-3009 authorizations (one per chain, token, payer, nonce). */
export interface ClaimRow {
  id: string;
  chain_id: number;
  token: string;
  payer: string;
  nonce: string;
  recipient: string;
  amount: string;
  valid_before: string;
  signature: string;
  /** The machine-payment challenge it paid (`Payment` scheme `authorization` credential), else null. */
  challenge_id: string | null;
  created_at: Date;
}

export type ClaimKey = Pick<ClaimRow, 'chain_id' | 'token' | 'payer' | 'nonce'>;

export async function findClaim(q: Queryable, k: ClaimKey): Promise<ClaimRow | undefined> {
  const { rows } = await q.query<ClaimRow>('SELECT * FROM x402_authorizations WHERE chain_id = $1 AND token = $2 AND payer = $3 AND nonce = $4', [k.chain_id, k.token, k.payer, k.nonce]);
  return rows[0];
}

/**
 * The claim as the companion of the executor's settlement row (settlement/repo.ts
 * CompanionInsert): both are written by one statement, so a claim exists exactly when its
 * transaction is recorded; an existing claim records nothing.
 */
export function claimCompanion(c: Omit<ClaimRow, 'created_at'>): CompanionInsert {
  return {
    sql: `INSERT INTO x402_authorizations (id, chain_id, token, payer, nonce, recipient, amount, valid_before, signature, challenge_id)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
          ON CONFLICT (chain_id, token, payer, nonce) DO NOTHING RETURNING id`,
    params: [c.id, c.chain_id, c.token, c.payer, c.nonce, c.recipient, c.amount, c.valid_before, c.signature, c.challenge_id],
    // The settlement's transfer pays the challenge it was made for, or is the x402 settlement itself.
    claim: c.challenge_id ? { purpose: 'mpp_challenge', purposeId: c.challenge_id } : { purpose: 'x402_settlement', purposeId: c.id },
  };
}
