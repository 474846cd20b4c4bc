import type { CalldataSignRequest } from './types.ts';

/**
 * What {@link signCalldataSignRequest} needs from a signer: viem's `LocalAccount` and
 * `WalletClient` (with an account) both fit, without the SDK depending on viem.
 */
export interface TypedDataSigner {
  signTypedData(args: { domain: any; types: any; primaryType: any; message: any }): Promise<`0x${string}`>;
}

/** uint fields of `Eip3009CallbackData`: JSON carries them as strings, signers want bigints. */
const UINT = /^u?int\d*$/;

/**
 * Signs a DELEGATE order's `calldataSignRequest` (wire.md `calldata_sign_request`) with a viem
 * account, for tests and for a merchant's own frontend; submit the result with
 * `client.submitCalldataSignature(orderId, signature)`. In a browser wallet, passing the raw
 * request to `eth_signTypedData_v4` gives the same signature.
 *
 * @example
 * import { privateKeyToAccount } from 'viem/accounts';
 * const signature = await signCalldataSignRequest(privateKeyToAccount(payerKey), order.calldataSignRequest!);
 * await tollgate.submitCalldataSignature(order.orderId, signature);
 */
export function signCalldataSignRequest(signer: TypedDataSigner, req: CalldataSignRequest): Promise<`0x${string}`> {
  const { EIP712Domain: _domain, ...types } = req.types;
  const fields = types[req.primaryType] ?? [];
  const message: Record<string, unknown> = { ...req.message };
  for (const f of fields) if (UINT.test(f.type) && typeof message[f.name] === 'string') message[f.name] = BigInt(message[f.name] as string);
  return signer.signTypedData({ domain: req.domain, types, primaryType: req.primaryType, message });
}
