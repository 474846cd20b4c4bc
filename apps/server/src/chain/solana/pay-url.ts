/**
 * Solana Pay transfer requests (pure): the `solana:` URL a wallet opens, and the order's reference
 * key. Spec: https://docs.solanapay.com/spec — `solana:<recipient>?amount=<decimal>&spl-token=<mint>
 * &reference=<base58>&label=…&message=…`. The recipient is the merchant's WALLET (the wallet derives
 * the associated token account of the mint); the amount is a decimal in token units, never a float.
 */
import { randomBytes } from 'node:crypto';
import { getBase58Decoder } from '@solana/codecs-strings';

export interface TransferRequest {
  /** the merchant's wallet (base58) */
  recipient: string;
  /** smallest-unit amount */
  amount: bigint;
  decimals: number;
  /** base58 mint */
  splToken: string;
  /** base58 reference keys the payer's transfer instruction must carry */
  references: string[];
  label?: string;
  message?: string;
}

/** Exact decimal string of a smallest-unit amount (`1500000n, 6` → `1.5`). */
export function toDecimal(amount: bigint, decimals: number): string {
  const s = amount.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const frac = decimals ? s.slice(s.length - decimals).replace(/0+$/, '') : '';
  return frac ? `${whole}.${frac}` : whole;
}

export function transferRequestUrl(r: TransferRequest): string {
  const q = new URLSearchParams();
  q.set('amount', toDecimal(r.amount, r.decimals));
  q.set('spl-token', r.splToken);
  for (const ref of r.references) q.append('reference', ref);
  if (r.label) q.set('label', r.label);
  if (r.message) q.set('message', r.message);
  // URLSearchParams encodes spaces as '+'; the spec asks for URL (percent) encoding.
  return `solana:${r.recipient}?${q.toString().replace(/\+/g, '%20')}`;
}

/**
 * A fresh reference key: 32 random bytes in base58, as Solana Pay's `Keypair.generate().publicKey`
 * (a public key nobody needs the secret of; random bytes are as unique and need no curve point).
 */
export function newReference(random: (n: number) => Uint8Array = (n) => randomBytes(n)): string {
  return getBase58Decoder().decode(random(32));
}
