import type { CalldataSignRequest, Eip3009Authorization } from './types.ts';

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
 * Signs a DELEGATE order's `calldataSignRequest` (docs/delegate.md) with a viem
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

/** The order fields an EIP-3009 authorization pays (a `createOrder` result has them all). */
export interface AuthorizationTarget {
  tokenContract: string;
  payToAddress: string;
  amountWei: string;
  fromChainId: number;
}

/**
 * Signs an EIP-3009 `transferWithAuthorization` of `order.amountWei` to `order.payToAddress` for
 * an `ERC20_3009` DELEGATE order (the gasless payment: the payer signs, the gateway relays and
 * pays the gas). `token` is the token's EIP-712 domain name and version (USDC: its `name()` and
 * `version()`, e.g. "USD Coin" and "2"). Submit the result with `client.submitAuthorization`.
 * Defaults: `validAfter` 0, `validBefore` one hour from now, a random 32-byte `nonce`.
 *
 * @example
 * import { privateKeyToAccount } from 'viem/accounts';
 * const auth = await signEip3009Authorization(privateKeyToAccount(payerKey), order, { name: 'USD Coin', version: '2' });
 * await tollgate.submitAuthorization(order.orderId, auth);
 */
export async function signEip3009Authorization(
  signer: TypedDataSigner & { address: string },
  order: AuthorizationTarget,
  token: { name: string; version: string },
  opts: { validAfter?: bigint; validBefore?: bigint; nonce?: `0x${string}` } = {},
): Promise<Eip3009Authorization> {
  const nonce = opts.nonce ?? randomNonce();
  const message = {
    from: signer.address,
    to: order.payToAddress,
    value: BigInt(order.amountWei),
    validAfter: opts.validAfter ?? 0n,
    validBefore: opts.validBefore ?? BigInt(Math.floor(Date.now() / 1000) + 3600),
    nonce,
  };
  const signature = await signer.signTypedData({
    domain: { name: token.name, version: token.version, chainId: order.fromChainId, verifyingContract: order.tokenContract },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization',
    message,
  });
  return {
    from: message.from,
    to: message.to,
    value: message.value.toString(),
    validAfter: message.validAfter.toString(),
    validBefore: message.validBefore.toString(),
    nonce,
    signature,
  };
}

function randomNonce(): `0x${string}` {
  const b = new Uint8Array(32);
  globalThis.crypto.getRandomValues(b);
  return `0x${Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')}`;
}
