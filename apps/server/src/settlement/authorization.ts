import { encodeFunctionData, getAddress, parseAbi, parseTransaction, recoverTypedDataAddress, type Hex, type PublicClient } from 'viem';
import { splitSignature } from '../chain/evm/signature.ts';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import * as orders from '../orders/repo.ts';
import type { SettlementExecutor } from './executor.ts';
import { findSettlement } from './repo.ts';
import { delegateFlowNamed } from './flows/index.ts';

/**
 * The gasless EIP-3009 payment of an `ERC20_3009` order (docs/delegate.md): the payer signs
 * a `transferWithAuthorization` to the order's `payToAddress` (the settlement contract) and the
 * merchant backend submits it; the executor key submits it to the token and pays the gas.
 *
 * Everything is checked before anything is recorded: the order awaits payment, `from` is the
 * order's payer, `to` its pay-to address, `value` its amount, the validity window is open (with
 * a margin for inclusion), the signature recovers to `from` under the token's own EIP-712 domain,
 * and the call simulates (a used or canceled nonce, a short balance fail here). The relay then
 * takes the executor's record-before-send path (kind `relay`, one per order): a crash between
 * record and send is finished by the settlement worker's reconcile, and a repeat of the same
 * authorization returns the same transaction.
 *
 * Why a relay to the pool and not `settleWithAuthorization` in one transaction: the wire format
 * fixes the signed struct as `transferWithAuthorization`, which pays the pool; the contract's
 * one-transaction path needs a `receiveWithAuthorization` signature (a different EIP-712 type,
 * chosen there so nobody can front-run a pull). The relayed payment lands in the pool as an
 * ordinary Transfer, the watcher confirms it, and the order settles from the pool like a plain
 * transfer, through the same once-per-order path.
 */

export interface Eip3009Authorization {
  from: Hex;
  to: Hex;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  signature: Hex;
}

export type AuthorizationOutcome =
  | { kind: 'relayed'; orderId: string; txHash: Hex }
  | { kind: 'order_not_found' }
  /** The order's flow takes no authorization (not ERC20_3009, or not a DELEGATE order). */
  | { kind: 'not_relayable' }
  | { kind: 'not_payable'; status: string }
  | { kind: 'invalid'; param: keyof Eip3009Authorization; message: string }
  /** The nonce is used or canceled on chain, or another authorization was relayed for this order. */
  | { kind: 'used'; message: string };

/** The window must stay open this long after the check, so the relayed transaction can be mined. */
const MIN_REMAINING_S = 30n;

const TOKEN_ABI = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
  'function name() view returns (string)',
  'function version() view returns (string)',
  // the test tokens' custom errors (USDC itself reverts with reason strings): decoded, they name the refusal
  'error AuthorizationAlreadyUsed(address authorizer, bytes32 nonce)',
  'error AuthorizationExpired(uint256 validBefore)',
  'error AuthorizationNotYetValid(uint256 validAfter)',
  'error InvalidSignature()',
  'error InsufficientBalance(address account, uint256 balance, uint256 needed)',
]);

const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** A token's EIP-712 name and version never change for a deployed contract: read once per token. */
const domains = new Map<string, Promise<{ name: string; version: string }>>();

function tokenDomain(client: PublicClient, chainId: number, token: Hex): Promise<{ name: string; version: string }> {
  const key = `${chainId}:${token.toLowerCase()}`;
  let d = domains.get(key);
  if (!d) {
    d = client
      .readContract({ address: token, abi: TOKEN_ABI, functionName: 'eip712Domain' })
      .then(([, name, version]) => ({ name, version }))
      // USDC (FiatTokenV2) has no EIP-5267 view but public name() and version()
      .catch(async () => ({
        name: await client.readContract({ address: token, abi: TOKEN_ABI, functionName: 'name' }),
        version: await client.readContract({ address: token, abi: TOKEN_ABI, functionName: 'version' }),
      }));
    // an RPC fault must not be remembered
    d.catch(() => domains.delete(key));
    domains.set(key, d);
  }
  return d;
}

const eq = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function callArgs(auth: Eip3009Authorization) {
  const sig = splitSignature(auth.signature);
  // Only reached for a signature that recovered (or inside callDataOf's catch).
  if (!sig) throw new Error('not a 65-byte ECDSA signature');
  return [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce, sig.v, sig.r, sig.s] as const;
}

/** The relay's call data, or undefined for a signature that does not parse (checked later). */
function callDataOf(auth: Eip3009Authorization): Hex | undefined {
  try {
    return encodeFunctionData({ abi: TOKEN_ABI, functionName: 'transferWithAuthorization', args: callArgs(auth) });
  } catch {
    return undefined;
  }
}

export async function relayAuthorization(deps: { db: Database; clock: Clock; executorFor(chainId: number): SettlementExecutor | undefined }, merchantId: string, orderId: string, auth: Eip3009Authorization): Promise<AuthorizationOutcome> {
  const order = await orders.getOrderForMerchant(deps.db, merchantId, orderId);
  if (!order) return { kind: 'order_not_found' };
  if (!delegateFlowNamed(order.flow)?.relaysAuthorization) return { kind: 'not_relayable' };
  const ex = deps.executorFor(order.chain_id);
  if (!ex) return { kind: 'not_relayable' };
  // A retry of the authorization already relayed names its transaction whatever the order's status
  // since: the relay may be mined and seen by the watcher before the merchant's retry arrives.
  const relayed = await findSettlement(deps.db, order.chain_id, order.id, 'relay');
  if (relayed && callDataOf(auth) === parseTransaction(relayed.rawTx).data) return { kind: 'relayed', orderId: order.id, txHash: relayed.txHash };
  const nowMs = deps.clock.now();
  if (order.status !== 'CHECKOUT_VERIFIED' || order.expires_at.getTime() <= nowMs) return { kind: 'not_payable', status: order.status };
  if (relayed) return { kind: 'used', message: 'another authorization was already relayed for this order' };

  if (!eq(auth.from, order.from_address)) return { kind: 'invalid', param: 'from', message: "from is not the order's from_address" };
  if (!eq(auth.to, order.pay_to_address)) return { kind: 'invalid', param: 'to', message: "to is not the order's pay_to_address (the settlement contract)" };
  if (auth.value !== BigInt(order.amount_wei)) return { kind: 'invalid', param: 'value', message: `value must equal the order amount ${order.amount_wei}` };
  const now = BigInt(Math.floor(nowMs / 1000));
  if (auth.validAfter >= now) return { kind: 'invalid', param: 'validAfter', message: 'the authorization is not valid yet (validAfter is not in the past)' };
  if (auth.validBefore <= now + MIN_REMAINING_S) {
    return { kind: 'invalid', param: 'validBefore', message: `the authorization expires too soon (validBefore must be at least ${MIN_REMAINING_S} s ahead)` };
  }

  const token = order.token_contract as Hex;
  const { name, version } = await tokenDomain(ex.client, order.chain_id, token);
  let signer: Hex;
  try {
    signer = await recoverTypedDataAddress({
      domain: { name, version, chainId: order.chain_id, verifyingContract: getAddress(token) },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: { from: auth.from, to: auth.to, value: auth.value, validAfter: auth.validAfter, validBefore: auth.validBefore, nonce: auth.nonce },
      signature: auth.signature,
    });
  } catch {
    return { kind: 'invalid', param: 'signature', message: 'the signature is not a valid 65-byte ECDSA signature' };
  }
  if (!eq(signer, auth.from)) return { kind: 'invalid', param: 'signature', message: 'the signature does not recover to from for this TransferWithAuthorization' };

  const args = callArgs(auth);
  const data = encodeFunctionData({ abi: TOKEN_ABI, functionName: 'transferWithAuthorization', args });
  const p = await ex.prepareCall({
    kind: 'relay',
    orderId: order.id,
    to: token,
    data,
    estimate: (account) => ex.client.estimateContractGas({ address: token, abi: TOKEN_ABI, functionName: 'transferWithAuthorization', args, account }),
  });
  if (p.kind === 'refused') {
    if (/AlreadyUsed|used or canceled/i.test(p.error)) return { kind: 'used', message: 'this authorization nonce was already used or canceled on chain' };
    return { kind: 'invalid', param: 'signature', message: `the token refuses the authorization (${p.error})` };
  }
  if (p.kind === 'existing') {
    // One relay per order: the same authorization again is an idempotent retry, another one is refused.
    if (parseTransaction(p.record.rawTx).data !== data) return { kind: 'used', message: 'another authorization was already relayed for this order' };
    return { kind: 'relayed', orderId: order.id, txHash: p.record.txHash };
  }
  // Best effort now: a failed send leaves the row pending, and the settlement worker re-broadcasts it.
  await ex.broadcast(p.record).catch(() => undefined);
  return { kind: 'relayed', orderId: order.id, txHash: p.record.txHash };
}
