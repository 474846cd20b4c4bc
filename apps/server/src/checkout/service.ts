import { chainById } from '../chain/registry.ts';
import { isId, newId, type ErrorCode } from '@tollgate/protocol';
import { isPgError, pgConstraint, UNIQUE_VIOLATION } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config/schema.ts';
import type { Database } from '../db/database.ts';
import type { MerchantService } from '../merchants/service.ts';
import type { OrderService } from '../orders/service.ts';
import * as repo from './repo.ts';
import { effectiveStatus, isExpiredAt, isLiveOrder, isPayable } from './states.ts';
import { transitionSession } from './transition.ts';
import { draftSession, type CreateSessionBody } from './validate.ts';

/**
 * A bind needs at least this much payment window left: a payer who opens a wallet, confirms and
 * waits for inclusion needs about a minute on a busy L1, and an order that expires while the
 * transfer is in flight is the worst outcome (paid late, reconciled by hand).
 */
export const MIN_PAYMENT_WINDOW_SECONDS = 60;

export type Refused = { kind: 'refused'; code: ErrorCode; message: string; param?: string | undefined };
export type CreateSessionOutcome = { kind: 'created'; session: repo.SessionRow; url: string } | Refused;
export type BindOutcome = { kind: 'bound'; terms: BindTerms; created: boolean } | { kind: 'not_found' } | Refused;

export interface BindTerms {
  order_id: string;
  chain_id: number;
  token_symbol: string;
  token_contract: string;
  pay_to_address: string;
  amount_wei: string;
  expires_at: number;
  /** Solana: the order's Solana Pay transfer request (`solana:` URL, with its reference key) */
  payment_url?: string;
}

const refused = (code: ErrorCode, message: string, param?: string): Refused => ({ kind: 'refused', code, message, ...(param ? { param } : {}) });

/**
 * The hosted page URL of a session. The id travels in the FRAGMENT (`#cs_…`): browsers never send
 * a fragment to any server, so the capability cannot reach an access log, a proxy or CDN log, or
 * a `Referer` header of a request the page makes; the page reads it from `location.hash` and calls
 * the public routes itself (whose paths Tollgate's own log redacts).
 *
 * @example hostedUrl('https://pay.example', 'cs_9x…') // => 'https://pay.example/checkout/pay#cs_9x…'
 */
export function hostedUrl(publicBaseUrl: string, checkoutId: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/checkout/pay#${checkoutId}`;
}

/**
 * Hosted checkout sessions: creation (merchant API), public reads, payment initiation (bind) and
 * the expiry sweep. Returns typed outcomes; the routes map them to HTTP. Order status changes reach
 * sessions through `sync.ts`, called by orders/transition.ts.
 */
/** What checkout is built from (routes and the sweeper pass the composition root's deps). */
interface CheckoutContext {
  db: Database;
  config: Config;
  clock: Clock;
  merchants: MerchantService;
  orders: OrderService;
}

export class CheckoutService {
  private readonly deps: CheckoutContext;
  constructor(deps: CheckoutContext) {
    this.deps = deps;
  }

  async createSession(merchantId: string, body: CreateSessionBody): Promise<CreateSessionOutcome> {
    const { db, merchants, clock, config } = this.deps;
    const m = await merchants.getMerchant(merchantId);
    if (!m) return refused('merchant_not_found', 'merchant not found');
    const wallets = await merchants.listWallets(merchantId);
    const out = draftSession(body, { cardEnabled: m.card_enabled, returnUrls: m.return_urls, wallets }, clock.now());
    if (out.kind === 'refused') return refused(out.code, out.message, out.param);
    const id = newId('cs');
    try {
      const session = await repo.insertSession(db, id, merchantId, out.draft);
      return { kind: 'created', session, url: hostedUrl(config.publicBaseUrl, id) };
    } catch (err) {
      if (isPgError(err, UNIQUE_VIOLATION) && pgConstraint(err) === 'checkout_sessions_client_reference_key') {
        return refused('client_reference_id_conflict', 'this client_reference_id was already used by this merchant; the original session is not returned', 'client_reference_id');
      }
      throw err;
    }
  }

  /** A session with its latest order, or undefined (also for a malformed id: no database read). */
  async getSession(id: string): Promise<repo.SessionWithOrder | undefined> {
    if (!isId('cs', id)) return undefined;
    return repo.getSessionWithOrder(this.deps.db, id);
  }

  /**
   * Payment initiation: creates the session's DIRECT order for this payer and token, or returns the
   * live one when the same payer asks again with the same terms. See the route for the HTTP rules.
   * The same payer's unpaid order of ANOTHER session with the same terms is superseded (EXPIRED,
   * trigger `supersede`) by the new order in one transaction (orders/supersede.ts).
   *
   * Concurrency without a long transaction (PGlite has one connection, and createOrder runs on its
   * own): the n-th order of a session has dapp_order_id `checkout:<id>:<n>`, unique per merchant,
   * so two simultaneous binds cannot both create order n — the loser re-reads and sees the
   * winner's order (same terms → those terms; another payer → 409). The link to the session is a
   * short conditional transaction; an order whose link fails (the session expired or completed in
   * between) is cancelled at once, releasing its fee.
   */
  async bindSession(id: string, input: { chainId: number; tokenSymbol: string; fromAddress: string }): Promise<BindOutcome> {
    if (!isId('cs', id)) return { kind: 'not_found' };
    const { db, clock, config, orders } = this.deps;
    // The payer's address in the form of the chain's family (EVM lowercase, Solana base58 as given).
    const family = chainById(config, input.chainId)?.family;
    const payer = family ? family.normalizeAddress(input.fromAddress) : undefined;
    if (family && !payer) {
      return refused('invalid_request', family.kind === 'evm' ? 'from_address must be a valid EVM address (EIP-55 checksum when mixed case)' : 'from_address must be a base58 Solana public key', 'from_address');
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const v = await repo.getSessionWithOrder(db, id);
      if (!v) return { kind: 'not_found' };
      const { session: s, order: o } = v;
      const now = clock.now();
      const status = effectiveStatus({ status: s.status, expiresAt: s.expires_at }, o && { status: o.status, paymentSeen: o.payment_seen }, now);
      if (status === 'EXPIRED' || (isPayable(status) && now >= s.expires_at.getTime())) return refused('session_expired', 'the checkout session expired; start no new payment on it');
      if (!isPayable(status)) return refused('session_not_payable', `the checkout session is ${status}; start no new payment on it`);
      if (!s.payment_rails.includes('crypto')) return refused('rail_not_enabled', 'this checkout session offers no crypto payment', 'token_symbol');
      const option = s.payment_options.find((p) => p.chain_id === input.chainId && p.token_symbol === input.tokenSymbol);
      if (!option) {
        return s.payment_options.some((p) => p.chain_id === input.chainId)
          ? refused('token_not_supported', `this session accepts no ${input.tokenSymbol} on chain ${input.chainId}`, 'token_symbol')
          : refused('chain_not_supported', `this session accepts no payment on chain ${input.chainId}`, 'chain_id');
      }

      if (o && isLiveOrder(o.status)) {
        if (o.from_address !== payer || o.chain_id !== input.chainId || o.token_symbol !== input.tokenSymbol) {
          return refused('session_already_bound', 'the session is bound to another payer or token while its order is live');
        }
        // Same payer and terms: the same order. Link it if the bind that created it could not.
        if (s.order_id !== o.id) await this.link(s.id, o.id);
        return { kind: 'bound', terms: this.termsOf(o), created: false };
      }

      // No order yet, or the last one expired or was cancelled while the session is still open: a
      // new order, whose window never outlives the session.
      const expiresAtMs = Math.min(s.expires_at.getTime(), now + config.orderTtlSeconds * 1000);
      if (expiresAtMs - now < MIN_PAYMENT_WINDOW_SECONDS * 1000) {
        return refused('session_not_payable', `less than ${MIN_PAYMENT_WINDOW_SECONDS} s are left on this checkout session to start a payment`);
      }
      const out = await orders.createOrder({
        merchantId: s.merchant_id,
        // Checkout sessions are DIRECT (docs/migrating.md): the payer pays the merchant wallet.
        receiveType: 'DIRECT',
        dappOrderId: `checkout:${s.id}:${v.orderCount + 1}`,
        chainId: input.chainId,
        tokenSymbol: input.tokenSymbol,
        fromAddress: input.fromAddress,
        amountWei: option.amount_wei,
        checkoutId: s.id,
        expiresAt: new Date(expiresAtMs),
        // The payer's own unpaid order of another session with these terms (they left it and came
        // back through a new session) gives way to this one: orders/supersede.ts.
        supersede: true,
      });
      if (out.kind === 'refused') {
        // A concurrent bind made order n (its dapp_order_id, or its identical live terms, won the
        // race): re-read and answer from its order. A live-terms clash that persists is an order
        // no session may supersede (the merchant's own, or one with a payment seen): 409.
        if (out.code === 'order_already_exists' || (out.code === 'order_conflict' && attempt === 0)) continue;
        return refused(out.code, out.message, out.param);
      }
      if (!(await this.link(s.id, out.order.id))) {
        await orders.cancelOrder(s.merchant_id, out.order.id);
        continue; // the re-read reports why (expired, completed, …)
      }
      const r = out.order;
      return {
        kind: 'bound',
        created: true,
        terms: this.termsOf({ id: r.id, chain_id: r.chain_id, token_symbol: r.token_symbol, token_contract: r.token_contract, dapp_order_id: r.dapp_order_id, pay_to_address: r.pay_to_address, amount_wei: r.amount_wei, expires_at: r.expires_at }),
      };
    }
    return refused('session_already_bound', 'the checkout session changed concurrently; read it again before retrying');
  }

  /** Bind terms of an order; a Solana order adds its `solana:` transfer request (the chain family's). */
  termsOf(o: Pick<repo.SessionOrder, 'id' | 'chain_id' | 'token_symbol' | 'token_contract' | 'dapp_order_id' | 'pay_to_address' | 'amount_wei' | 'expires_at'>): BindTerms {
    const c = chainById(this.deps.config, o.chain_id);
    const decimals = c?.family.tokens(c.chain).find((t) => t.address === o.token_contract)?.decimals;
    const url = c?.family.paymentUrl && decimals !== undefined ? c.family.paymentUrl(c.chain, { ...o, decimals }) : undefined;
    return {
      order_id: o.id,
      chain_id: o.chain_id,
      token_symbol: o.token_symbol,
      token_contract: o.token_contract,
      pay_to_address: o.pay_to_address,
      amount_wei: o.amount_wei,
      expires_at: Math.floor(o.expires_at.getTime() / 1000),
      ...(url ? { payment_url: url } : {}),
    };
  }

  /**
   * Links `orderId` as the session's order (OPEN → BOUND, or BOUND → BOUND replacing a dead
   * order), unless the session stopped being payable or already has another live order.
   */
  private link(id: string, orderId: string): Promise<boolean> {
    return this.deps.db.transaction(async (tx) => {
      const s = await repo.lockSession(tx, id);
      if (!s) return false;
      if (s.order_id === orderId) return true;
      if (this.deps.clock.now() >= s.expires_at.getTime()) return false;
      if (s.status === 'OPEN') return (await transitionSession(tx, { id, trigger: 'bind', from: 'OPEN', patch: { order_id: orderId }, orderId })) !== undefined;
      if (s.status !== 'BOUND') return false;
      const current = s.order_id ? await repo.getOrderFacts(tx, s.order_id) : undefined;
      if (current && isLiveOrder(current.status)) return false;
      return (await transitionSession(tx, { id, trigger: 'rebind', from: 'BOUND', patch: { order_id: orderId }, orderId, detail: { replaced_order_id: s.order_id } })) !== undefined;
    });
  }

  /**
   * Expires sessions past `expires_at` (states.isExpiredAt): OPEN ones, and BOUND ones whose order
   * has no payment seen — that order expires by itself (its expiry ≤ the session's). A BOUND
   * session whose payment was seen keeps following its order. Returns how many it expired.
   */
  async expireDue(limit = 500): Promise<number> {
    const { db, clock } = this.deps;
    const due = await repo.listExpirableSessions(db, new Date(clock.now()), limit);
    let n = 0;
    for (const { id } of due) {
      const done = await db.transaction(async (tx) => {
        // Re-check under the row lock: a bind or a payment may have happened since the listing.
        const s = await repo.lockSession(tx, id);
        if (!s || (s.status !== 'OPEN' && s.status !== 'BOUND')) return false;
        const f = s.order_id ? await repo.getOrderFacts(tx, s.order_id) : undefined;
        if (!isExpiredAt({ status: s.status, expiresAt: s.expires_at }, f && { status: f.status, paymentSeen: f.payment_seen }, clock.now())) return false;
        return (await transitionSession(tx, { id, trigger: 'expire', from: s.status, orderId: s.order_id ?? undefined })) !== undefined;
      });
      if (done) n++;
    }
    return n;
  }
}

const services = new WeakMap<object, CheckoutService>();

/** The checkout service of an app (one per context object: the composition root's deps; routes and the sweeper share it). */
export function checkoutOf(deps: CheckoutContext): CheckoutService {
  let s = services.get(deps);
  if (!s) services.set(deps, (s = new CheckoutService(deps)));
  return s;
}
