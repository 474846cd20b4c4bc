// The DELEGATE callback envelope and the payer's EIP-712 signing request, in one place so the
// gateway, the SDK, tests and merchants' own frontends encode them identically to the contracts.
//
// What the payer signs (wire format "calldata_sign_request"): an `Eip3009CallbackData` struct under
// the callback adapter's EIP-712 domain, binding the token, the pool that holds the funds
// (`owner` = the settlement contract, the chain's `spent_address`), the payer, the amount, the
// order (keccak256 of its UTF-8 id), a nonce, a deadline and the keccak256 of the calldata.
//
// What the adapter receives as `calldata_` (built on chain by TollgateSettlement, so the order id
// in it is always the order being settled):
//   abi.encode(bytes32 orderId, bytes calldata, uint256 calldataNonce, uint256 deadline, bytes signature)
// and the empty byte string when the order had no signed calldata.
import { decodeAbiParameters, encodeAbiParameters, getAddress, keccak256, size, toBytes, type Address, type Hex } from 'viem';

/** Upper bound of `callback_calldata` in bytes; the order API and TollgateSettlement use the same 8 KiB. */
export const MAX_CALLBACK_CALLDATA_BYTES = 8192;

/** The struct payers sign; field order is part of the typehash, so never reorder it. */
export const EIP3009_CALLBACK_DATA_TYPES = {
  Eip3009CallbackData: [
    { name: 'token', type: 'address' },
    { name: 'owner', type: 'address' },
    { name: 'payer', type: 'address' },
    { name: 'amount', type: 'uint256' },
    { name: 'orderId', type: 'bytes32' },
    { name: 'calldataNonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
    { name: 'calldataHash', type: 'bytes32' },
  ],
} as const;

const EIP712_DOMAIN_FIELDS = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
] as const;

/** ABI parameters of the envelope an adapter decodes from `calldata_`. */
export const CALLBACK_ENVELOPE_PARAMETERS = [
  { name: 'orderId', type: 'bytes32' },
  { name: 'calldata', type: 'bytes' },
  { name: 'calldataNonce', type: 'uint256' },
  { name: 'deadline', type: 'uint256' },
  { name: 'signature', type: 'bytes' },
] as const;

export interface CallbackEnvelope {
  /** keccak256 of the UTF-8 order id (see orderIdToBytes32). */
  orderId: Hex;
  /** The merchant's `callback_calldata`, as signed. */
  calldata: Hex;
  calldataNonce: bigint;
  /** Unix seconds; the signature is void after it. */
  deadline: bigint;
  /** 65-byte EIP-712 signature of the payer. */
  signature: Hex;
}

export interface CalldataSignRequestInput {
  /** The callback chain (the chain of the merchant's callback registration). */
  chainId: number;
  callbackContract: Address;
  eip712Name: string;
  eip712Version: string;
  token: Address;
  /** The settlement contract: where the funds sit before the callback. */
  spentAddress: Address;
  payer: Address;
  amount: bigint;
  /** The gateway's order id (`ord_…`), hashed here. */
  orderId: string;
  calldataNonce: bigint;
  deadline: bigint;
  calldata: Hex;
}

/** A complete EIP-712 object as sent in `calldata_sign_request`; message values are strings. */
export interface CalldataSignRequest {
  domain: { name: string; version: string; chainId: number; verifyingContract: Address };
  types: typeof EIP3009_CALLBACK_DATA_TYPES & { EIP712Domain: typeof EIP712_DOMAIN_FIELDS };
  primaryType: 'Eip3009CallbackData';
  message: {
    token: Address;
    owner: Address;
    payer: Address;
    amount: string;
    orderId: Hex;
    calldataNonce: string;
    deadline: string;
    calldataHash: Hex;
  };
}

/**
 * The bytes32 form of an order id that signatures and the settlement contract use.
 *
 * @example
 * orderIdToBytes32('ord_2x9…') // keccak256 of the UTF-8 bytes
 */
export function orderIdToBytes32(orderId: string): Hex {
  return keccak256(toBytes(orderId));
}

function assertCalldataBounds(calldata: Hex): void {
  if (!/^0x([0-9a-fA-F]{2})*$/.test(calldata)) throw new Error('callback calldata must be 0x-prefixed hex bytes');
  if (size(calldata) > MAX_CALLBACK_CALLDATA_BYTES) {
    throw new Error(`callback calldata is ${size(calldata)} bytes; at most ${MAX_CALLBACK_CALLDATA_BYTES}`);
  }
}

/**
 * Builds the EIP-712 signing request for a callback-enabled DELEGATE order.
 *
 * @example
 * const req = buildCalldataSignRequest({ chainId: 31337, callbackContract, eip712Name: 'Tollgate Credit',
 *   eip712Version: '1', token: usdc, spentAddress: settlement, payer, amount: 5_000_000n,
 *   orderId: 'ord_abc', calldataNonce: 1n, deadline: 1_900_000_000n, calldata: '0x…' });
 * const signature = await payerAccount.signTypedData(toSignableTypedData(req));
 */
export function buildCalldataSignRequest(input: CalldataSignRequestInput): CalldataSignRequest {
  assertCalldataBounds(input.calldata);
  return {
    domain: {
      name: input.eip712Name,
      version: input.eip712Version,
      chainId: input.chainId,
      verifyingContract: getAddress(input.callbackContract),
    },
    types: { EIP712Domain: EIP712_DOMAIN_FIELDS, ...EIP3009_CALLBACK_DATA_TYPES },
    primaryType: 'Eip3009CallbackData',
    message: {
      token: getAddress(input.token),
      owner: getAddress(input.spentAddress),
      payer: getAddress(input.payer),
      amount: input.amount.toString(),
      orderId: orderIdToBytes32(input.orderId),
      calldataNonce: input.calldataNonce.toString(),
      deadline: input.deadline.toString(),
      calldataHash: keccak256(input.calldata),
    },
  };
}

/**
 * The same request in the typed form viem's `signTypedData` / `verifyTypedData` want (bigints, no
 * EIP712Domain entry: viem derives it from the domain). The wire JSON keeps strings because JSON
 * has no 256-bit integers; wallets given the raw JSON (eth_signTypedData_v4) accept it as is.
 *
 * @example
 * const signature = await account.signTypedData(toSignableTypedData(order.calldataSignRequest));
 */
export function toSignableTypedData(req: CalldataSignRequest) {
  return {
    domain: req.domain,
    types: EIP3009_CALLBACK_DATA_TYPES,
    primaryType: 'Eip3009CallbackData' as const,
    message: {
      ...req.message,
      amount: BigInt(req.message.amount),
      calldataNonce: BigInt(req.message.calldataNonce),
      deadline: BigInt(req.message.deadline),
    },
  };
}

/** TollgateSettlement's `cb` argument: the signed calldata and its message fields. */
export interface SettlementCallbackData {
  data: Hex;
  calldataNonce: bigint;
  deadline: bigint;
  signature: Hex;
}

/** `cb` for an order without signed calldata (a plain payout, or a callback with empty `calldata_`). */
export const NO_CALLBACK_DATA: SettlementCallbackData = { data: '0x', calldataNonce: 0n, deadline: 0n, signature: '0x' };

/**
 * `cb` for an order whose signing request the payer signed. Refuses calldata that is not the one
 * the request was issued for (the contract would refuse it too, after the executor paid the gas).
 *
 * @example
 * await settlement.write.settle([order, callbackDataFor(order.calldataSignRequest, order.callbackCalldata, signature)]);
 */
export function callbackDataFor(req: CalldataSignRequest, calldata: Hex, signature: Hex): SettlementCallbackData {
  if (keccak256(calldata) !== req.message.calldataHash) throw new Error('calldata does not match the signing request');
  return { data: calldata, calldataNonce: BigInt(req.message.calldataNonce), deadline: BigInt(req.message.deadline), signature };
}

/**
 * Encodes the envelope exactly as TollgateSettlement passes it to an adapter (for adapter tests
 * and off-chain simulation).
 *
 * @example
 * const calldata_ = encodeCallbackEnvelope({ orderId: orderIdToBytes32('ord_abc'), calldata, calldataNonce: 1n, deadline, signature });
 */
export function encodeCallbackEnvelope(envelope: CallbackEnvelope): Hex {
  assertCalldataBounds(envelope.calldata);
  return encodeAbiParameters(CALLBACK_ENVELOPE_PARAMETERS, [envelope.orderId, envelope.calldata, envelope.calldataNonce, envelope.deadline, envelope.signature]);
}

/**
 * Decodes an adapter's `calldata_`; `null` for the empty byte string (an order without signed calldata).
 *
 * @example
 * const env = decodeCallbackEnvelope(log.args.calldata_); // { orderId, calldata, calldataNonce, deadline, signature } | null
 */
export function decodeCallbackEnvelope(data: Hex): CallbackEnvelope | null {
  if (data === '0x') return null;
  const [orderId, calldata, calldataNonce, deadline, signature] = decodeAbiParameters(CALLBACK_ENVELOPE_PARAMETERS, data);
  return { orderId, calldata, calldataNonce, deadline, signature };
}
