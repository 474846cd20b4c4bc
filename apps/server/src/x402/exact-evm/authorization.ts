import { isAddress, isHex, type Hex } from 'viem';
import { splitSignature } from '../../chain/evm/signature.ts';
import { Reason, type PaymentPayload, type PaymentRequirements, type ReasonCode } from '../wire.ts';

/** An EIP-3009 authorization of an x402 `exact` payload, parsed (addresses and hex lowercase). */
export interface Authorization {
  from: Hex;
  to: Hex;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  /** 65-byte ECDSA signature (r ‖ s ‖ v). */
  signature: Hex;
}

/** What the requirements ask for, parsed. */
export interface Requirement {
  chainId: number;
  asset: Hex;
  payTo: Hex;
  amount: bigint;
  /** EIP-712 domain name/version from `extra`, when the resource server sent them. */
  name?: string;
  version?: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: ReasonCode; message: string };

const UINT = /^\d{1,78}$/;
const fail = (reason: ReasonCode, message: string) => ({ ok: false as const, reason, message });

/** `eip155:<chain id>` → chain id. */
function chainIdOf(network: string): number | undefined {
  const m = /^eip155:([1-9]\d{0,15})$/.exec(network);
  return m ? Number(m[1]) : undefined;
}

export function parseRequirements(r: PaymentRequirements): Parsed<Requirement> {
  const chainId = chainIdOf(r.network);
  if (chainId === undefined) return fail(Reason.invalidNetwork, `network ${JSON.stringify(r.network)} is not eip155:<chain id>`);
  if (!isAddress(r.asset, { strict: false })) return fail(Reason.invalidPayload, 'requirements.asset is not an address');
  if (!isAddress(r.payTo, { strict: false })) return fail(Reason.invalidPayload, 'requirements.payTo is not an address');
  if (!UINT.test(r.amount)) return fail(Reason.invalidPayload, 'requirements.amount is not an unsigned integer string');
  const extra = r.extra ?? {};
  const method = extra.assetTransferMethod;
  if (method !== undefined && method !== 'eip3009') return fail(Reason.unsupportedTransferMethod, `asset transfer method ${String(method)} is not supported (eip3009 only)`);
  const name = typeof extra.name === 'string' ? extra.name : undefined;
  const version = typeof extra.version === 'string' ? extra.version : undefined;
  return {
    ok: true,
    value: {
      chainId,
      asset: r.asset.toLowerCase() as Hex,
      payTo: r.payTo.toLowerCase() as Hex,
      amount: BigInt(r.amount),
      ...(name !== undefined && version !== undefined ? { name, version } : {}),
    },
  };
}

/** The `payload` member of an `exact` EVM payment with an EIP-3009 authorization. */
export function parseAuthorization(p: PaymentPayload): Parsed<Authorization> {
  const a = p.payload.authorization;
  const signature = p.payload.signature;
  if (typeof a !== 'object' || a === null) {
    return fail(Reason.unsupportedPayloadType, 'payload.authorization is missing: only EIP-3009 payloads are supported');
  }
  const auth = a as Record<string, unknown>;
  const str = (k: string) => (typeof auth[k] === 'string' ? (auth[k] as string) : undefined);
  const from = str('from');
  const to = str('to');
  const nonce = str('nonce');
  if (!from || !isAddress(from, { strict: false }) || !to || !isAddress(to, { strict: false })) return fail(Reason.invalidPayload, 'authorization.from/to must be addresses');
  if (!nonce || !isHex(nonce) || nonce.length !== 66) return fail(Reason.invalidPayload, 'authorization.nonce must be 32 bytes hex');
  for (const k of ['value', 'validAfter', 'validBefore']) {
    if (!UINT.test(str(k) ?? '')) return fail(Reason.invalidPayload, `authorization.${k} must be an unsigned integer string`);
  }
  // EOAs only: a 65-byte signature. Contract wallets (ERC-1271, ERC-6492) are not supported.
  // A last byte that is no recovery id is refused here, not left to split later (it threw there: 500).
  if (typeof signature !== 'string' || !splitSignature(signature)) return fail(Reason.invalidSignature, 'signature must be a 65-byte ECDSA signature (r ‖ s ‖ v, v one of 0, 1, 27, 28)');
  return {
    ok: true,
    value: {
      from: from.toLowerCase() as Hex,
      to: to.toLowerCase() as Hex,
      value: BigInt(str('value')!),
      validAfter: BigInt(str('validAfter')!),
      validBefore: BigInt(str('validBefore')!),
      nonce: nonce.toLowerCase() as Hex,
      signature: signature.toLowerCase() as Hex,
    },
  };
}

/** Seconds that must remain before `validBefore` (the reference facilitator's margin): the settle transaction needs time to be mined. */
const MIN_VALIDITY_SECONDS = 6n;

/**
 * The checks that need no chain and no database, in the reference facilitator's order after the
 * signature: recipient, validity window, exact amount.
 */
export function checkTerms(a: Authorization, r: Requirement, nowSeconds: bigint): Parsed<null> {
  if (a.to !== r.payTo) return fail(Reason.recipientMismatch, 'authorization.to is not requirements.payTo');
  if (a.validBefore < nowSeconds + MIN_VALIDITY_SECONDS) return fail(Reason.validBefore, `the authorization expires in less than ${MIN_VALIDITY_SECONDS} s`);
  if (a.validAfter > nowSeconds) return fail(Reason.validAfter, 'the authorization is not valid yet');
  // Scheme `exact`: the authorized value is the price, not more, not less.
  if (a.value !== r.amount) return fail(Reason.valueMismatch, 'authorization.value is not requirements.amount');
  return { ok: true, value: null };
}
