import type { Clock } from '../../clock.ts';
import type { Config } from '../../config/schema.ts';
import type { Database } from '../../db/database.ts';
import type { MerchantService } from '../../merchants/service.ts';
import type { Mpp } from '../../mpp/index.ts';
import type { OrderService } from '../../orders/service.ts';
import type { ErrorCode, QuickPayStatus } from '@tollgate/protocol';
import type { LinkRow, ProductRow, SessionRow, SessionWithOrder } from '../repo.ts';
import type { QuickPayRailName } from '../validate.ts';

/**
 * What quick-pay and its rails are built from (routes and workers pass the composition root's
 * deps; the card rail finds its service by that object, rails/card/index.ts cardsOf).
 */
export interface QuickPayContext {
  db: Database;
  config: Config;
  clock: Clock;
  merchants: MerchantService;
  orders: OrderService;
  /** the receipts' key signs the agent manifest (signed-manifest.ts) */
  mpp: Pick<Mpp, 'receipts'>;
}

/**
 * The rail port of quick-pay: a session is stored by the service (limits, idempotency, amount,
 * memo are rail-independent), then handed to its rail, which creates the payment object and says
 * what the session's status is. Crypto (rails/crypto.ts) creates a DIRECT order; the card rail
 * (its own issue) will create a card checkout and report COMPLETED on INVOICED. Adding a rail is
 * one file here and one entry in rails/index.ts; the service never tests a rail's name.
 */

/** Every status a quick-pay session can show, over all rails: the wire's list (packages/protocol/src/states.ts). */
export type { QuickPayStatus };

export type RailRefusal = { kind: 'refused'; code: ErrorCode; message: string; param?: string | undefined };

/** The rail-specific fields of a session request (the route's body). */
export interface RailRequest {
  chain_id?: number | undefined;
  token_symbol?: string | undefined;
  from_address?: string | undefined;
}

/** What a rail decided before the session row exists (stored with it). */
interface RailChoice {
  chainId: number | null;
  tokenSymbol: string | null;
  fromAddress: string | null;
}

export interface QuickPayRail {
  readonly name: QuickPayRailName;
  /**
   * The amount a session on this rail pays, when the rail prices differently from the link's
   * crypto price (card: the product's fiat amount). Absent: the link's amount rule (validate.ts).
   */
  sessionAmount?(link: LinkRow, product: ProductRow | undefined, raw: string | undefined): string | RailRefusal;
  /** Checks the rail's request fields against the link and the amount (no I/O beyond config). */
  choose(deps: QuickPayContext, a: { link: LinkRow; product: ProductRow | undefined; amount: string; request: RailRequest }): Promise<RailChoice | RailRefusal>;
  /** Creates the payment object of a stored session; returns when its window ends. */
  open(deps: QuickPayContext, session: SessionRow): Promise<{ kind: 'opened'; orderId?: string; checkoutId?: string; expiresAt: Date } | RailRefusal>;
  /** The session's status at `nowMs`. */
  status(v: SessionWithOrder, nowMs: number): QuickPayStatus;
  /** The payment terms of an open session (what the payer pays, where; `config`: the chains, for a family's own terms). */
  terms(v: SessionWithOrder, config: RailConfig): Record<string, unknown> | undefined;
}

/** What a rail's terms read of the configuration: the chains of every family. */
export type RailConfig = Pick<Config, 'chains' | 'solanaChains'>;
