import { formatUnits, parseDecimal, type ErrorCode } from '@tollgate/protocol';
import { isAddress } from 'viem';
import type { QuickPayContext } from '../rails/port.ts';
import * as repo from '../repo.ts';
import type { QuickPayStatus } from '../rails/port.ts';
import { quickpayOf, type Refused } from '../service.ts';
import { resolveGoatTarget, type GoatLink, type GoatTarget } from './target.ts';

/**
 * GOAT's quick-pay session wire (`POST /quickpay/v1/x402/sessions`, `GET …/{session_id}`) mapped onto
 * Tollgate's sessions: the request names a GOAT id (target.ts), a token by chain and contract, the
 * payer, and either a `product_key` (a fixed-price link) or `amount_wei` (the custom-amount link).
 * The session is opened by the ordinary service (limits, idempotency, the DIRECT order), so the
 * two wires share one set of sessions and orders.
 */

export interface GoatSessionBody {
  merchant_id: string;
  payer_addr: string;
  chain_id: number;
  token_contract: string;
  amount_wei?: string | undefined;
  product_key?: string | undefined;
  memo?: string | undefined;
  idempotency_key?: string | undefined;
}

const refused = (code: ErrorCode, message: string, param?: string): Refused => ({ kind: 'refused', code, message, ...(param ? { param } : {}) });

/**
 * GOAT's session statuses. ORDER_CREATED is the only state in which GOAT's client pays a fresh
 * session; PAYMENT_PENDING (a transfer was seen, not yet final) makes it wait; the others are
 * terminal. CANCELLED is not produced: Tollgate reports a cancelled unpaid order as EXPIRED.
 */
function goatStatus(status: QuickPayStatus, v: repo.SessionWithOrder): string {
  switch (status) {
    case 'OPEN':
      return v.order?.payment_seen ? 'PAYMENT_PENDING' : 'ORDER_CREATED';
    case 'COMPLETED':
      return 'PAYMENT_CONFIRMED';
    default:
      return status;
  }
}

function pick(t: GoatTarget, b: GoatSessionBody): GoatLink | Refused {
  if (b.product_key !== undefined) {
    const p = t.products.find((x) => x.link.id === b.product_key);
    return p ?? refused('product_not_found', `product ${b.product_key} is not offered by ${t.id}`, 'product_key');
  }
  return t.custom ?? refused('invalid_request', `${t.id} takes no custom amount: pass a product_key from the manifest`, 'amount_wei');
}

export type GoatOpen = { kind: 'session'; view: repo.SessionWithOrder; status: QuickPayStatus; reused: boolean; target: GoatTarget; link: GoatLink } | Refused | { kind: 'not_found' };

/** Opens (or finds again) the session a GOAT session request asks for. */
export async function openGoatSession(deps: QuickPayContext, b: GoatSessionBody, client?: { address: string }): Promise<GoatOpen> {
  const t = await resolveGoatTarget(deps, b.merchant_id);
  if (!t) return { kind: 'not_found' };
  const l = pick(t, b);
  if ('kind' in l) return l;
  const token = l.tokens.find((x) => x.chain_id === b.chain_id && x.token_contract.toLowerCase() === b.token_contract.toLowerCase());
  if (!token) {
    return l.tokens.some((x) => x.chain_id === b.chain_id)
      ? refused('token_not_supported', `this payment takes no token ${b.token_contract} on chain ${b.chain_id}`, 'token_contract')
      : refused('chain_not_supported', `this payment takes no token on chain ${b.chain_id}`, 'chain_id');
  }
  if (!isAddress(b.payer_addr)) return refused('invalid_request', 'payer_addr must be an EVM address (EIP-55 checksum when mixed case)', 'payer_addr');
  let amount: string;
  if (l.product) {
    // The server prices a product; an amount sent with it must be that price.
    if (b.memo !== undefined && b.memo !== '') return refused('invalid_request', 'a product payment takes no memo', 'memo');
    amount = l.product.price!;
    if (b.amount_wei !== undefined && b.amount_wei !== parseDecimal(amount, token.decimals).toString()) {
      return refused('invalid_amount', `amount_wei is not the product's price in ${token.token_symbol}`, 'amount_wei');
    }
  } else {
    if (b.amount_wei === undefined || !/^[0-9]{1,78}$/.test(b.amount_wei) || BigInt(b.amount_wei) === 0n) {
      return refused('invalid_amount', 'amount_wei must be a positive integer string (the token’s smallest unit)', 'amount_wei');
    }
    amount = formatUnits(BigInt(b.amount_wei), token.decimals);
  }
  const req = {
    rail: 'crypto',
    amount,
    memo: b.memo,
    idempotency_key: b.idempotency_key,
    chain_id: token.chain_id,
    token_symbol: token.token_symbol,
    from_address: b.payer_addr,
  };
  // Without a key, the payer's own unpaid session with the same terms is returned as `reused`
  // (GOAT's client then polls instead of paying again) rather than superseded by a new one.
  if (!b.idempotency_key?.trim()) {
    const live = await repo.findLiveSession(deps.db, l.link.id, { fromAddress: b.payer_addr.toLowerCase(), chainId: token.chain_id, tokenSymbol: token.token_symbol, amount }, new Date(deps.clock.now()));
    if (live) {
      const s = await quickpayOf(deps).getSession(live.session.id);
      if (s) return { kind: 'session', view: s.view, status: s.status, reused: true, target: t, link: l };
    }
  }
  const out = await quickpayOf(deps).openSession(l.link.id, req, client);
  if (out.kind !== 'session') return out;
  return { kind: 'session', view: out.view, status: out.status, reused: !out.created, target: t, link: l };
}

/** The fields of a session both GOAT routes answer with. */
export function goatSessionView(v: repo.SessionWithOrder, status: QuickPayStatus) {
  const s = v.session;
  const o = v.order;
  return {
    session_id: s.id,
    status: goatStatus(status, v),
    ...(o ? { order_id: o.id, order_status: o.status } : {}),
    ...(o?.tx_hash ? { tx_hash: o.tx_hash } : {}),
    ...(o && !o.flow.startsWith('FIAT_') ? { chain_id: o.chain_id, token_symbol: o.token_symbol, token_contract: o.token_contract, amount_wei: o.amount_wei } : {}),
    ...(o?.paid_amount_wei && status !== 'OPEN' ? { amount_paid_wei: o.paid_amount_wei } : {}),
    ...(s.product_id ? { product_key: s.link_id } : {}),
    link_id: s.link_id,
    amount: s.amount,
    expires_at: Math.floor(s.expires_at.getTime() / 1000),
  };
}

/**
 * The answer to session creation: the session, `reused`, and while it can be paid the x402
 * payment requirements GOAT's client checks before paying (scheme, CAIP-2 network, amount in the
 * smallest unit, asset, payTo) — the same terms as the order's.
 */
export function goatCreatedView(r: Extract<GoatOpen, { kind: 'session' }>, nowMs: number) {
  const v = r.view;
  const o = v.order;
  const base = { ...goatSessionView(v, r.status), merchant_id: r.target.id, reused: r.reused };
  if (r.status !== 'OPEN' || !o) return base;
  return {
    ...base,
    pay_to: o.pay_to_address,
    x402: {
      x402Version: 2,
      accepts: [
        {
          scheme: 'exact',
          network: `eip155:${o.chain_id}`,
          amount: o.amount_wei,
          asset: o.token_contract,
          payTo: o.pay_to_address,
          maxTimeoutSeconds: Math.max(0, Math.floor((o.expires_at.getTime() - nowMs) / 1000)),
          extra: { order_id: o.id, token_symbol: o.token_symbol, decimals: o.decimals },
        },
      ],
    },
  };
}
