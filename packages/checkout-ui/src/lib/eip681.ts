import { isAddress } from './address.ts';

export interface Eip681Transfer {
  tokenContract: string;
  chainId: number;
  payTo: string;
  /** base units, integer string */
  amountWei: string;
}

/**
 * An EIP-681 payment request for an ERC-20 transfer, the form wallets read from a QR code:
 * `ethereum:<token>@<chainId>/transfer?address=<payTo>&uint256=<amount>`. The amount is the exact
 * integer in base units (no exponent notation: some wallets misread `2.5e6`).
 *
 * @example
 * buildEip681Transfer({ tokenContract: '0xa0b8…', chainId: 1, payTo: '0x1111…', amountWei: '9990000' })
 * // => 'ethereum:0xa0b8…@1/transfer?address=0x1111…&uint256=9990000'
 */
export function buildEip681Transfer(t: Eip681Transfer): string {
  if (!isAddress(t.tokenContract)) throw new TypeError(`not a token address: ${t.tokenContract}`);
  if (!isAddress(t.payTo)) throw new TypeError(`not a pay-to address: ${t.payTo}`);
  if (!Number.isSafeInteger(t.chainId) || t.chainId < 1) throw new RangeError(`invalid chain id ${t.chainId}`);
  if (!/^\d+$/.test(t.amountWei)) throw new RangeError(`not an integer amount: ${t.amountWei}`);
  const amount = BigInt(t.amountWei).toString(); // drops leading zeros
  return `ethereum:${t.tokenContract.toLowerCase()}@${t.chainId}/transfer?address=${t.payTo.toLowerCase()}&uint256=${amount}`;
}
