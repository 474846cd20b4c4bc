/** An EVM address as this page accepts it: `0x` and 40 hex digits (any case; sent lowercase). */
export function isAddress(s: unknown): s is string {
  return typeof s === 'string' && /^0x[0-9a-fA-F]{40}$/.test(s);
}

/**
 * Normalizes what a payer typed or pasted: trims whitespace; returns the lowercase address or
 * undefined when it is not `0x` + 40 hex digits.
 *
 * @example normalizeAddress(' 0xAbC…(40 hex) ') // => '0xabc…'
 */
export function normalizeAddress(input: string): string | undefined {
  const s = input.trim();
  return isAddress(s) ? s.toLowerCase() : undefined;
}

/** `0x1234…abcd` for tight layouts; the full address is always shown somewhere too. */
export function shortAddress(a: string): string {
  return a.length > 14 ? `${a.slice(0, 6)}…${a.slice(-4)}` : a;
}

/** A Solana public key as this page accepts it: base58, 32 to 44 characters (case-sensitive, sent as typed). */
export function isSolanaAddress(s: unknown): s is string {
  return typeof s === 'string' && /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(s);
}

/**
 * A payment option on Solana: its token is a base58 mint, where every EVM token is a `0x` contract.
 * The page needs no chain-family field for this.
 */
export const isSolanaOption = (o: { token_contract: string }): boolean => !o.token_contract.startsWith('0x');
