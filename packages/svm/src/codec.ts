/**
 * Byte layouts of SPL Token / Token-2022 accounts the local SVM reads and writes directly (pure,
 * no I/O). Mints are written into the SVM's account store at start (no transaction needed); token
 * accounts are only read, to compute the pre/post token balances a real RPC node reports.
 */
import { getAddressDecoder, getAddressEncoder, type Address } from '@solana/kit';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' as Address;
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb' as Address;
export const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL' as Address;

const MINT_LEN = 82;
const ACCOUNT_LEN = 165;
/** Token-2022: extensions start after the base account size plus one account-type byte. */
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;
const EXT_TRANSFER_FEE_CONFIG = 1;

const enc = getAddressEncoder();
const dec = getAddressDecoder();

export function isTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM || owner === TOKEN_2022_PROGRAM;
}

export interface TokenAccountState {
  mint: Address;
  owner: Address;
  amount: bigint;
  /** delegate and its remaining allowance (SOL_APPROVE_XFER reads them) */
  delegate: Address | null;
  delegatedAmount: bigint;
}

/** Reads a token account (classic or Token-2022); undefined when the bytes are not one (a mint, a multisig). */
export function readTokenAccount(data: Uint8Array): TokenAccountState | undefined {
  if (data.length < ACCOUNT_LEN) return undefined;
  // A Token-2022 account longer than the base size says what it is in its type byte; a mint with
  // extensions is padded to the same length, so the byte is what tells them apart.
  if (data.length > ACCOUNT_LEN && data[ACCOUNT_LEN] !== ACCOUNT_TYPE_ACCOUNT) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const state = data[108];
  if (state === 0) return undefined; // uninitialized
  const hasDelegate = view.getUint32(72, true) === 1;
  return {
    mint: dec.decode(data.subarray(0, 32)),
    owner: dec.decode(data.subarray(32, 64)),
    amount: view.getBigUint64(64, true),
    delegate: hasDelegate ? dec.decode(data.subarray(76, 108)) : null,
    delegatedAmount: view.getBigUint64(121, true),
  };
}

/** Decimals of a mint account (classic or Token-2022), or undefined when the bytes are not a mint. */
export function readMintDecimals(data: Uint8Array): number | undefined {
  if (data.length < MINT_LEN) return undefined;
  if (data.length > MINT_LEN && (data.length <= ACCOUNT_LEN || data[ACCOUNT_LEN] !== ACCOUNT_TYPE_MINT)) return undefined;
  return data[44];
}

export interface TransferFee {
  /** basis points of the transferred amount withheld in the destination */
  basisPoints: number;
  /** cap of the fee per transfer, in the token's smallest unit */
  maximumFee: bigint;
}

/**
 * A mint account's bytes. `fee` (Token-2022 only) adds the TransferFeeConfig extension with the
 * same fee for the older and newer epoch, so it applies from the first slot.
 */
export function encodeMint(opts: { mintAuthority: Address; decimals: number; supply?: bigint; fee?: TransferFee }): Uint8Array {
  const len = opts.fee ? ACCOUNT_LEN + 1 + 4 + 108 : MINT_LEN;
  const data = new Uint8Array(len);
  const view = new DataView(data.buffer);
  view.setUint32(0, 1, true); // COption::Some(mint authority)
  data.set(enc.encode(opts.mintAuthority), 4);
  view.setBigUint64(36, opts.supply ?? 0n, true);
  data[44] = opts.decimals;
  data[45] = 1; // initialized
  // freeze authority: COption::None (4 zero bytes + 32 zero bytes)
  if (opts.fee) {
    data[ACCOUNT_LEN] = ACCOUNT_TYPE_MINT;
    let o = ACCOUNT_LEN + 1;
    view.setUint16(o, EXT_TRANSFER_FEE_CONFIG, true);
    view.setUint16(o + 2, 108, true);
    o += 4;
    data.set(enc.encode(opts.mintAuthority), o); // transfer-fee config authority
    data.set(enc.encode(opts.mintAuthority), o + 32); // withdraw-withheld authority
    // withheld amount (u64) stays 0
    for (const epochFee of [o + 72, o + 90]) {
      // { epoch u64 = 0, maximum_fee u64, transfer_fee_basis_points u16 }
      view.setBigUint64(epochFee + 8, opts.fee.maximumFee, true);
      view.setUint16(epochFee + 16, opts.fee.basisPoints, true);
    }
  }
  return data;
}

/** The fee Token-2022 withholds on a transfer of `amount` (ceil of bps, capped), as the program computes it. */
export function transferFeeOf(amount: bigint, fee: TransferFee | undefined): bigint {
  if (!fee || fee.basisPoints === 0 || amount === 0n) return 0n;
  const raw = (amount * BigInt(fee.basisPoints) + 9_999n) / 10_000n;
  return raw > fee.maximumFee ? fee.maximumFee : raw;
}

/** `uiTokenAmount` of the RPC's token balances and getTokenAccountBalance. */
export function uiTokenAmount(amount: bigint, decimals: number) {
  const s = amount.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const frac = decimals ? s.slice(s.length - decimals).replace(/0+$/, '') : '';
  const uiAmountString = frac ? `${whole}.${frac}` : whole;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}
