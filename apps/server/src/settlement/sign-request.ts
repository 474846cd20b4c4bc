import { buildCalldataSignRequest, toSignableTypedData, type CalldataSignRequest } from '@tollgate/contracts';
import { keccak256, recoverTypedDataAddress, toBytes, type Hex } from 'viem';
import type { CallbackRow } from './repo.ts';

/**
 * The `calldata_sign_request` of a callback-enabled DELEGATE order, derived — never stored — from
 * the order, its callback registration and the chain's settlement contract. The same inputs give
 * the same request at creation (402 terms), at signature submission (verification) and at
 * settlement (the contract re-checks the signature), so the three can never disagree.
 *
 * - `deadline` = the order's expiry + SIGNATURE_GRACE_SECONDS: the payer must sign before the
 *   order expires (an unsigned paid order fails then), and the settlement transaction, sent after
 *   the payment's finality, must still be inside the deadline the contract enforces.
 * - `calldataNonce` = the first 64 bits of keccak256("tollgate:calldata-nonce:" + order id):
 *   unique per order (adapters may keep a used-nonce set) and reproducible without a column.
 */
const SIGNATURE_GRACE_SECONDS = 3600;

export interface SignRequestOrder {
  id: string;
  chain_id: number;
  token_contract: string;
  from_address: string;
  amount_wei: string;
  expires_at: Date;
  callback_calldata: string | null;
}

function signRequestDeadline(expiresAt: Date): bigint {
  return BigInt(Math.floor(expiresAt.getTime() / 1000) + SIGNATURE_GRACE_SECONDS);
}

function calldataNonceOf(orderId: string): bigint {
  return BigInt(keccak256(toBytes(`tollgate:calldata-nonce:${orderId}`)).slice(0, 18));
}

/** The request, or undefined for an order without `callback_calldata`. */
export function signRequestOf(order: SignRequestOrder, callback: Pick<CallbackRow, 'callback_contract' | 'eip712_name' | 'eip712_version'>, settlement: Hex): CalldataSignRequest | undefined {
  if (order.callback_calldata === null) return undefined;
  return buildCalldataSignRequest({
    chainId: order.chain_id,
    callbackContract: callback.callback_contract,
    eip712Name: callback.eip712_name,
    eip712Version: callback.eip712_version,
    token: order.token_contract as Hex,
    spentAddress: settlement,
    payer: order.from_address as Hex,
    amount: BigInt(order.amount_wei),
    orderId: order.id,
    calldataNonce: calldataNonceOf(order.id),
    deadline: signRequestDeadline(order.expires_at),
    calldata: order.callback_calldata as Hex,
  });
}

/**
 * Whether `signature` is the payer's signature of `req` (65 bytes, canonical: the settlement
 * contract refuses high-s and v other than 27/28, so the gateway refuses them first).
 */
export async function isPayerSignature(req: CalldataSignRequest, payer: string, signature: Hex): Promise<boolean> {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return false;
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = parseInt(signature.slice(130, 132), 16);
  if (s > SECP256K1_HALF_N || (v !== 27 && v !== 28)) return false;
  try {
    const recovered = await recoverTypedDataAddress({ ...toSignableTypedData(req), signature });
    return recovered.toLowerCase() === payer.toLowerCase();
  } catch {
    return false;
  }
}

const SECP256K1_HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
