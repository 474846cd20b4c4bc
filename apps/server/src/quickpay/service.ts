import { createHash } from 'node:crypto';
import { isId, newId, type ErrorCode, type LinkState } from '@tollgate/protocol';
import { isRefusal, railName as railNameOf } from '../checkout/fields.ts';
import { isPgError, pgConstraint, UNIQUE_VIOLATION, type Queryable } from '../db/database.ts';
import type { QuickPayContext } from './rails/port.ts';
import { MIN_PAYMENT_WINDOW_SECONDS } from '../checkout/service.ts';
import * as repo from './repo.ts';
import { HOLD_SECONDS, holderKey, isLimited, MAX_UNPAID_HOLDS } from './holds.ts';
import { RAILS } from './rails/index.ts';
import type { QuickPayRail, QuickPayStatus, RailRequest } from './rails/port.ts';
import { draftLink, draftProduct, parseMemo, sessionAmount, type LinkBody, type ProductBody } from './validate.ts';

export type Refused = { kind: 'refused'; code: ErrorCode; message: string; param?: string | undefined };
const refused = (code: ErrorCode, message: string, param?: string): Refused => ({ kind: 'refused', code, message, ...(param ? { param } : {}) });

/** The body of a session request (public route). */
export interface SessionRequest extends RailRequest {
  rail?: string | undefined;
  amount?: string | undefined;
  memo?: string | undefined;
  idempotency_key?: string | undefined;
}

export type SessionOutcome = { kind: 'session'; view: repo.SessionWithOrder; status: QuickPayStatus; rail: QuickPayRail; created: boolean } | Refused;

/** A link's state for payers: only ACTIVE takes new sessions. */
export type { LinkState };

/** The session creation fields a repeated idempotency key must match (hex SHA-256). */
function requestHash(rail: string, amount: string, memo: string | null, r: RailRequest): string {
  return createHash('sha256')
    .update(JSON.stringify([rail, amount, memo, r.chain_id ?? null, r.token_symbol ?? null, r.from_address?.toLowerCase() ?? null]))
    .digest('hex');
}

/**
 * Hosted quick-pay: products and payment links (merchant API), and the public sessions payers open
 * on a link. Limits (count, inventory, expiry, deactivation) and idempotency are decided here, under
 * a row lock of the link; the payment object itself comes from the session's rail (rails/).
 */
export class QuickPayService {
  private readonly deps: QuickPayContext;
  constructor(deps: QuickPayContext) {
    this.deps = deps;
  }

  // ---- products

  async createProduct(merchantId: string, body: ProductBody): Promise<{ kind: 'ok'; product: repo.ProductRow } | Refused> {
    const d = draftProduct(body);
    if (isRefusal(d)) return refused(d.code, d.message, d.param);
    if (!(await this.deps.merchants.getMerchant(merchantId))) return refused('merchant_not_found', 'merchant not found', 'merchant_id');
    return { kind: 'ok', product: await repo.insertProduct(this.deps.db, newId('prd'), merchantId, d) };
  }

  async updateProduct(merchantId: string, id: string, body: ProductBody): Promise<{ kind: 'ok'; product: repo.ProductRow } | Refused> {
    const base = isId('prd', id) ? await repo.getProduct(this.deps.db, id, merchantId) : undefined;
    if (!base) return refused('product_not_found', 'product not found', 'product_id');
    const d = draftProduct(body, base);
    if (isRefusal(d)) return refused(d.code, d.message, d.param);
    const p = await repo.updateProduct(this.deps.db, id, merchantId, d);
    return p ? { kind: 'ok', product: p } : refused('product_not_found', 'product not found', 'product_id');
  }

  getProduct(merchantId: string, id: string) {
    return isId('prd', id) ? repo.getProduct(this.deps.db, id, merchantId) : Promise.resolve(undefined);
  }

  listProducts(merchantId: string, limit: number) {
    return repo.listProducts(this.deps.db, merchantId, limit);
  }

  // ---- links

  async createLink(merchantId: string, body: LinkBody): Promise<{ kind: 'ok'; link: repo.LinkRow } | Refused> {
    const { db, merchants, clock } = this.deps;
    const m = await merchants.getMerchant(merchantId);
    if (!m) return refused('merchant_not_found', 'merchant not found');
    const product = body.product_id ? await this.getProduct(merchantId, body.product_id) : undefined;
    if (body.product_id && !product) return refused('product_not_found', 'product not found', 'product_id');
    const wallets = await merchants.listWallets(merchantId);
    const d = draftLink(body, { wallets, cardEnabled: m.card_enabled, product, nowMs: clock.now() });
    if (isRefusal(d)) return refused(d.code, d.message, d.param);
    const missing = d.payment_rails.find((r) => !RAILS[r]);
    if (missing) return refused('rail_not_enabled', `the ${missing} rail of quick-pay is not available on this deployment yet`, 'payment_rails');
    return { kind: 'ok', link: await repo.insertLink(db, newId('pl'), merchantId, d) };
  }

  async updateLink(merchantId: string, id: string, body: LinkBody): Promise<{ kind: 'ok'; link: repo.LinkRow } | Refused> {
    const base = isId('pl', id) ? await repo.getLink(this.deps.db, id, merchantId) : undefined;
    if (!base) return refused('link_not_found', 'payment link not found', 'link_id');
    const d = draftLink(body, { wallets: [], cardEnabled: false, product: undefined, nowMs: this.deps.clock.now() }, base);
    if (isRefusal(d)) return refused(d.code, d.message, d.param);
    const l = await repo.updateLink(this.deps.db, id, merchantId, d);
    return l ? { kind: 'ok', link: l } : refused('link_not_found', 'payment link not found', 'link_id');
  }

  getLink(merchantId: string | undefined, id: string) {
    return isId('pl', id) ? repo.getLink(this.deps.db, id, merchantId) : Promise.resolve(undefined);
  }

  listLinks(merchantId: string, limit: number) {
    return repo.listLinks(this.deps.db, merchantId, limit);
  }

  /** A link with its product and merchant for the public view, or undefined. */
  publicLink(id: string) {
    return isId('pl', id) ? repo.getPublicLink(this.deps.db, id) : Promise.resolve(undefined);
  }

  /**
   * Whether a link takes new sessions now (reads the held-session counts when it has limits).
   * `returning`: the terms of a session being opened; the same payer's unpaid session with those
   * terms does not count, since the new one supersedes it.
   */
  async linkState(link: repo.LinkRow, product: repo.ProductRow | undefined, q: Queryable = this.deps.db, returning?: repo.ReturningPayer): Promise<LinkState> {
    const now = this.deps.clock.now();
    if (!link.active || (product && !product.active)) return 'INACTIVE';
    if (link.expires_at && now >= link.expires_at.getTime()) return 'EXPIRED';
    if (link.max_payments !== null && (await repo.countHeldSessions(q, { linkId: link.id }, new Date(now), returning)) >= link.max_payments) return 'SOLD_OUT';
    if (product?.inventory != null && (await repo.countHeldSessions(q, { productId: product.id }, new Date(now), returning)) >= product.inventory) return 'SOLD_OUT';
    return 'ACTIVE';
  }

  /** The link's sessions with their orders (merchant records), or undefined for another merchant's link. */
  async linkSessions(merchantId: string, linkId: string, limit: number) {
    const link = await this.getLink(merchantId, linkId);
    if (!link) return undefined;
    return repo.listLinkSessions(this.deps.db, linkId, limit);
  }

  // ---- sessions

  async getSession(id: string): Promise<{ view: repo.SessionWithOrder; status: QuickPayStatus; rail: QuickPayRail } | undefined> {
    if (!isId('qps', id)) return undefined;
    const view = await repo.getSession(this.deps.db, id);
    const rail = view && RAILS[view.session.rail];
    if (!view || !rail) return undefined;
    return { view, status: rail.status(view, this.deps.clock.now()), rail };
  }

  /**
   * Opens a session on a link (or returns the one an idempotency key already made).
   *
   * Order of work: checks that need no lock; then, in one short transaction holding the link's
   * row lock (and the product's when it has inventory), the limit counts and the session insert —
   * so two payers can never both take the last slot; then the rail creates the payment object
   * outside that transaction (order creation is group-committed on its own). A session whose
   * payment object cannot be created is deleted, freeing its slot, and the refusal is returned.
   */
  async openSession(linkId: string, req: SessionRequest, client?: { address: string }): Promise<SessionOutcome | { kind: 'not_found' }> {
    const { db, clock, config } = this.deps;
    const found = await this.publicLink(linkId);
    if (!found) return { kind: 'not_found' };
    const { link, product } = found;
    // `fiat` is the card rail's other name (checkout/fields.ts `railName`): from here on the request
    // names it `card`, so an idempotent retry with either word is the same request.
    const railName = railNameOf(req.rail ?? 'crypto', 'card');
    const rail = railName && RAILS[railName];
    if (railName) req = { ...req, rail: railName };
    if (!railName || !link.payment_rails.includes(railName) || !rail) return refused('rail_not_enabled', `this link offers no ${req.rail} payment`, 'rail');
    const key = req.idempotency_key?.trim() || null;
    if (key !== null && !/^[\x21-\x7e]{1,128}$/.test(key)) return refused('invalid_request', 'idempotency_key must be 1 to 128 printable ASCII characters', 'idempotency_key');
    if (key !== null) {
      const prior = await this.byKey(link.id, key, req);
      if (prior) return prior;
    }
    const amount = rail.sessionAmount ? rail.sessionAmount(link, product, req.amount) : sessionAmount(link, product?.price ?? null, req.amount);
    if (isRefusal(amount)) return refused(amount.code, amount.message, amount.param);
    if (typeof amount !== 'string') return refused('amount_out_of_range', amount.message, 'amount');
    const memo = parseMemo(req.memo);
    if (isRefusal(memo)) return refused(memo.code, memo.message, memo.param);
    const choice = await rail.choose(this.deps, { link, product, amount, request: req });
    if ('kind' in choice) return choice;

    const now = clock.now();
    // A limited link's session holds a unit only briefly (quickpay/holds.ts): its window is the hold.
    const limited = isLimited(link, product);
    const windowEnd = Math.min(now + Math.min(config.orderTtlSeconds, limited ? HOLD_SECONDS : Infinity) * 1000, link.expires_at?.getTime() ?? Infinity);
    const holder = limited && client ? holderKey(config.masterKey, client.address) : null;
    const id = newId('qps');
    const inserted = await db
      .transaction(async (tx): Promise<Refused | repo.SessionRow> => {
        const l = await repo.lockLink(tx, link.id);
        const p = l?.product_id ? await repo.lockProduct(tx, l.product_id) : undefined;
        if (!l) return refused('link_not_found', 'payment link not found', 'link_id');
        const returning = choice.fromAddress !== null && choice.chainId !== null && choice.tokenSymbol !== null ? { fromAddress: choice.fromAddress, chainId: choice.chainId, tokenSymbol: choice.tokenSymbol, amount } : undefined;
        const state = await this.linkState(l, p, tx, returning);
        if (state !== 'ACTIVE') return stateRefusal(state);
        if (holder !== null && (await repo.countUnpaidHolds(tx, holder, { linkId: l.id, productId: l.product_id }, new Date(now), returning)) >= MAX_UNPAID_HOLDS)
          return refused('quickpay_hold_limit', `this address already holds ${MAX_UNPAID_HOLDS} unpaid payments of this link; pay one of them or wait until one lapses (at most ${HOLD_SECONDS / 60} minutes)`);
        if (windowEnd - now < MIN_PAYMENT_WINDOW_SECONDS * 1000) return refused('link_expired', `less than ${MIN_PAYMENT_WINDOW_SECONDS} s are left on this link to start a payment`);
        return repo.insertSession(tx, {
          id,
          linkId: l.id,
          merchantId: l.merchant_id,
          productId: l.product_id,
          rail: railName,
          amount,
          memo,
          idempotencyKey: key,
          requestHash: requestHash(railName, amount, memo, req),
          ...choice,
          holder,
          expiresAt: new Date(windowEnd),
        });
      })
      .catch((err: unknown) => {
        // A double click: the other request with the same key inserted first.
        if (isPgError(err, UNIQUE_VIOLATION) && pgConstraint(err) === 'quickpay_sessions_idempotency_key') return 'duplicate_key' as const;
        throw err;
      });
    if (inserted === 'duplicate_key') return (await this.byKey(link.id, key!, req)) ?? refused('idempotency_key_conflict', 'a request with this idempotency key is still being processed; read it again');
    if ('kind' in inserted) return inserted;

    const opened = await rail.open(this.deps, inserted);
    if (opened.kind === 'refused') {
      await repo.deleteOrderlessSession(db, inserted.id);
      return opened;
    }
    if (opened.orderId) await repo.setSessionOrder(db, inserted.id, opened.orderId, opened.expiresAt);
    const view = (await repo.getSession(db, inserted.id))!;
    return { kind: 'session', view, status: rail.status(view, clock.now()), rail, created: true };
  }

  /**
   * The session an idempotency key made on this link: the same request gets it back (its terms
   * while open, its status once settled); another request with the key is a 409. A session still
   * waiting for its payment object (the first request is in flight) is waited for briefly.
   */
  private async byKey(linkId: string, key: string, req: SessionRequest): Promise<SessionOutcome | undefined> {
    for (let i = 0; i < 20; i++) {
      const v = await repo.getSessionByKey(this.deps.db, linkId, key);
      if (!v) return undefined;
      const s = v.session;
      const rail = RAILS[s.rail]!;
      const sameRequest =
        s.rail === (req.rail ?? 'crypto') &&
        (req.amount === undefined || req.amount === '' || req.amount === s.amount) &&
        (s.memo ?? '') === (req.memo?.trim() ?? '') &&
        (req.chain_id === undefined || req.chain_id === s.chain_id) &&
        (req.token_symbol === undefined || req.token_symbol === s.token_symbol) &&
        (req.from_address === undefined || req.from_address.toLowerCase() === s.from_address?.toLowerCase());
      if (!sameRequest) return refused('idempotency_key_conflict', 'this idempotency key was used for a different request on this link', 'idempotency_key');
      if (v.order || s.checkout_id) return { kind: 'session', view: v, status: rail.status(v, this.deps.clock.now()), rail, created: false };
      // The first request is between its insert and its order: wait for it (at most ~1 s).
      await new Promise((r) => setTimeout(r, 50));
    }
    return refused('idempotency_key_conflict', 'a request with this idempotency key is still being processed; read it again', 'idempotency_key');
  }
}

function stateRefusal(state: Exclude<LinkState, 'ACTIVE'>): Refused {
  switch (state) {
    case 'INACTIVE':
      return refused('link_inactive', 'this payment link was deactivated by the merchant');
    case 'EXPIRED':
      return refused('link_expired', 'this payment link has expired');
    case 'SOLD_OUT':
      return refused('link_sold_out', 'this payment link reached its payment limit or its product is out of stock');
  }
}

const services = new WeakMap<object, QuickPayService>();

/** The quick-pay service of an app (one per context object: the composition root's deps). */
export function quickpayOf(deps: QuickPayContext): QuickPayService {
  let s = services.get(deps);
  if (!s) services.set(deps, (s = new QuickPayService(deps)));
  return s;
}
