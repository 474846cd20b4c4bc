import type { Hex } from 'viem';

/** A 65-byte ECDSA signature split into the (v, r, s) an EIP-3009 token's `transferWithAuthorization` takes. */
export interface SplitSignature {
  v: 27 | 28;
  r: Hex;
  s: Hex;
}

/**
 * Splits a 65-byte ECDSA signature (r ‖ s ‖ v, 0x hex), or answers undefined when it is not one:
 * another length, or a last byte that is no recovery id (0/1, or 27/28 as wallets write it).
 * The one place payer signatures are split: viem's `parseSignature` throws a plain Error on such a
 * v byte (0x11, say), and callers that let it escape answered a payer's bad input with a 500.
 */
export function splitSignature(signature: string): SplitSignature | undefined {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined;
  const last = parseInt(signature.slice(130), 16);
  const v = last === 0 || last === 27 ? 27 : last === 1 || last === 28 ? 28 : undefined;
  if (v === undefined) return undefined;
  return { v, r: `0x${signature.slice(2, 66)}` as Hex, s: `0x${signature.slice(66, 130)}` as Hex };
}
