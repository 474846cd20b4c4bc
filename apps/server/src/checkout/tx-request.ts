/**
 * Solana Pay transaction requests of a checkout session (the page's "Pay with <wallet>"): the
 * session's bound order, paid by the account that asks, as a transaction the gateway builds and
 * the payer's wallet signs and sends (chain/solana/tx-request.ts builds it). The rules:
 *  - the session must be payable and bound to a live, unpaid order (bind first: the order, its
 *    reference key and its payer exist before any transaction is built);
 *  - the asking account must be the order's payer (`from_address` of the bind): the record names
 *    who pays, and another wallet gets a 409 as a bind by another payer would;
 *  - once the watcher has seen a payment for the order, no second transaction is built.
 * Attribution does not depend on any of this: the transaction carries the order's reference key.
 */
import { isId } from '@tollgate/protocol';
import { chainById } from '../chain/registry.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import * as repo from './repo.ts';
import type { Refused } from './service.ts';
import { effectiveStatus, isPayable } from './states.ts';

export type TxRequestOutcome = { kind: 'ok'; transaction: string; message: string } | { kind: 'not_found' } | Refused;

const refused = (code: Refused['code'], message: string, param?: string): Refused => ({ kind: 'refused', code, message, ...(param ? { param } : {}) });

/** The label of the GET half (the merchant's name), or undefined when the session does not exist. */
export async function transactionRequestLabel(deps: { db: Database }, id: string): Promise<string | undefined> {
  if (!isId('cs', id)) return undefined;
  return (await repo.getSessionWithOrder(deps.db, id))?.merchant.name;
}

export async function paymentTransaction(deps: { db: Database; config: Config; clock: Clock }, id: string, account: string): Promise<TxRequestOutcome> {
  if (!isId('cs', id)) return { kind: 'not_found' };
  const v = await repo.getSessionWithOrder(deps.db, id);
  if (!v) return { kind: 'not_found' };
  const { session: s, order: o } = v;
  const now = deps.clock.now();
  const status = effectiveStatus({ status: s.status, expiresAt: s.expires_at }, o && { status: o.status, paymentSeen: o.payment_seen }, now);
  if (status === 'EXPIRED' || now >= s.expires_at.getTime()) return refused('session_expired', 'the checkout session expired; start no new payment on it');
  if (!isPayable(status)) return refused('session_not_payable', `the checkout session is ${status}; start no new payment on it`);
  if (o?.status !== 'CHECKOUT_VERIFIED' || o.flow.startsWith('FIAT_')) {
    return o && (o.status === 'PAYMENT_CONFIRMED' || o.payment_seen)
      ? refused('session_not_payable', 'a payment for this checkout was already seen; send no second one')
      : refused('invalid_request', 'the session has no order waiting for a token payment: bind it to a payer and token first', 'checkout_id');
  }
  if (o.payment_seen || o.tx_hash) return refused('session_not_payable', 'a payment for this checkout was already seen; send no second one');
  if (now >= o.expires_at.getTime()) return refused('session_not_payable', 'the order’s payment window has closed; bind again');
  const c = chainById(deps.config, o.chain_id);
  if (!c?.family.paymentTransaction) return refused('invalid_request', 'the order’s chain has no transaction requests; pay with the terms of the bind', 'checkout_id');
  const payer = c.family.normalizeAddress(account);
  if (!payer) return refused('invalid_request', 'account must be a base58 public key', 'account');
  if (payer !== o.from_address) return refused('session_already_bound', 'the session is bound to another payer while its order is live');
  let transaction: string;
  try {
    transaction = await c.family.paymentTransaction(c.chain, { account: payer, order: o });
  } catch {
    // The cluster did not answer (blockhash, account read): nothing was built, the payer may retry.
    return refused('service_unavailable', 'the network could not be reached to prepare the transaction; try again');
  }
  return { kind: 'ok', transaction, message: `Payment to ${v.merchant.name}`.slice(0, 100) };
}
