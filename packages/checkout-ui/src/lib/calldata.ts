import { isAddress } from './address.ts';

/** `transfer(address,uint256)` selector: the first 4 bytes of keccak256 of that signature. */
export const ERC20_TRANSFER_SELECTOR = '0xa9059cbb';
const MAX_UINT256 = (1n << 256n) - 1n;

/**
 * ABI-encodes an ERC-20 `transfer(to, amount)` call by hand (no ABI library in the bundle):
 * selector, then the address left-padded to 32 bytes, then the amount as a 32-byte big-endian word.
 *
 * @example
 * encodeErc20Transfer('0x' + '11'.repeat(20), 1_000_000n)
 * // => '0xa9059cbb' + '0'.repeat(24) + '11'.repeat(20) + '0'.repeat(59) + 'f4240'
 */
export function encodeErc20Transfer(to: string, amount: string | bigint): `0x${string}` {
  if (!isAddress(to)) throw new TypeError(`not an address: ${to}`);
  if (typeof amount === 'string' && !/^\d+$/.test(amount)) throw new RangeError(`not a uint256: ${amount}`);
  const value = BigInt(amount);
  if (value < 0n || value > MAX_UINT256) throw new RangeError(`not a uint256: ${amount}`);
  return `${ERC20_TRANSFER_SELECTOR}${to.slice(2).toLowerCase().padStart(64, '0')}${value.toString(16).padStart(64, '0')}`;
}

/** `0x`-prefixed hex chain id for wallet RPCs. @example toHexChainId(137) // => '0x89' */
export function toHexChainId(chainId: number): string {
  return `0x${chainId.toString(16)}`;
}
