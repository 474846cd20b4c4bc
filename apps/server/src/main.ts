import type { FastifyInstance } from 'fastify';
import type { Config } from './config/schema.ts';
import type { Database } from './db/database.ts';
import { openDatabase } from './db/open.ts';
import { systemClock, type Clock } from './clock.ts';
import type { AppDeps } from './deps.ts';
import { buildHttpApp, type HttpOptions } from './http/app.ts';
import { MerchantService } from './merchants/service.ts';
import { OrderService } from './orders/service.ts';
import { pruneNonces } from './merchants/repo.ts';
import { ROUTES } from './routes.ts';
import { httpPlugins } from './http-plugins.ts';
import { startWorkers, type Worker } from './workers.ts';
import { startChainSettlements, startChainWatchers } from './chain/registry.ts';
import { chainOrderPorts } from './chain/order-ports.ts';
import { evmPaymentPlanner } from './chain/evm/planner.ts';
import { solanaPaymentPlanner } from './chain/solana/planner.ts';
import { startWebhookDispatcher } from './webhooks/dispatcher.ts';
import { checkoutOf } from './checkout/service.ts';
import { Registry } from 'prom-client';
import { OpsMetrics } from './metrics/ops.ts';
import { followTransitions, observeTransitions } from './orders/transition.ts';
import { registerOrderRowParts } from './orders/views.ts';
import { cardOrderRowPart } from './rails/card/columns.ts';
import { delegateOrderRowPart } from './settlement/columns.ts';
import { syncSessionWithOrder } from './checkout/sync.ts';
import { isQuickPaySessionOrder } from './quickpay/rails/session-order.ts';
import { syncQuickPayWithOrder } from './quickpay/sync.ts';
import { createMpp } from './mpp/index.ts';
import { initCards } from './rails/card/index.ts';
import { cardCancelRefusal } from './rails/card/port.ts';
import { DelegateService } from './settlement/delegate.ts';
import { startSettlementWorkers } from './settlement/worker.ts';
import { observeFeeBumps } from './settlement/fee-bump.ts';
import { settleSummedPayments } from './quickpay/partial.ts';
import { portalAuth } from './portal/http.ts';
import { createX402 } from './x402/index.ts';
import { checkEvmChains } from './chain/evm/preset-check.ts';
import { createChainLogger } from './chain/evm/context.ts';

import type { Role } from './roles.ts';

export type { Role };

// Modules built on orders follow every order transition in its transaction: a checkout session
// completes or fails with its order, a quick-pay session sends its completion once. Registered when
// this module loads (once per process, whatever the number of gateways), before any order can move.
followTransitions(syncSessionWithOrder, syncQuickPayWithOrder);
// The columns of the order row the rails own and their fields of the status record (OrderRowPart,
// orders/row-parts.ts): registered before any app is built, so routes see the assembled schema.
registerOrderRowParts(delegateOrderRowPart, cardOrderRowPart);

export interface StartOptions {
  role?: Role;
  /** An already-open database (tests); otherwise opened from config and closed on `close()`. */
  db?: Database;
  clock?: Clock;
  http?: HttpOptions;
  /** Listen on config.host:config.port (default true); port 0 picks a free port. */
  listen?: boolean;
}

export interface Tollgate {
  deps: AppDeps;
  app: FastifyInstance | undefined;
  /** Base URL the API listens on (when listening). */
  url: string | undefined;
  close(): Promise<void>;
}

/**
 * The composition root: config → database → services → HTTP and/or workers.
 *
 * @example
 * const tg = await startTollgate(loadConfig(process.env));
 * // … later
 * await tg.close();
 */
export async function startTollgate(config: Config, opts: StartOptions = {}): Promise<Tollgate> {
  const role = opts.role ?? 'all';
  // Before anything reads the chains: every RPC URL on the right chain id, every preset chain as
  // its preset says (uncertain token facts are read here, before the services copy them).
  await checkEvmChains(config.chains, createChainLogger(config.logLevel));
  const ownsDb = !opts.db;
  const db = opts.db ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  const clock = opts.clock ?? systemClock;
  const merchants = new MerchantService(db, config);
  // Operator metrics: the services report through narrow callbacks; /metrics reads the registry.
  const metrics = new OpsMetrics(new Registry(), { db, clock });
  const delegate = new DelegateService(db, config, clock);
  const x402 = createX402(db, config, clock);
  // One payment planner per chain family: what order creation asks of the order's chain.
  const planners = { evm: evmPaymentPlanner(delegate), solana: solanaPaymentPlanner(config) };
  const deps: AppDeps = {
    config,
    db,
    clock,
    merchants,
    orders: new OrderService(db, config, merchants, clock, metrics.orders, { ...chainOrderPorts(config, planners), signRequests: delegate, cancelRefusal: cardCancelRefusal, sessionOrder: isQuickPaySessionOrder }),
    mpp: createMpp(db, config, merchants, clock, x402),
    delegate,
    x402,
  };
  const cards = await initCards(deps);
  const unobserveTransitions = observeTransitions(metrics.orders.transitioned);
  const unobserveBumps = observeFeeBumps(metrics.feeBumped);
  const unobserve = () => {
    unobserveTransitions();
    unobserveBumps();
  };

  let app: FastifyInstance | undefined;
  let url: string | undefined;
  const workers: Worker[] = [];
  try {
    if (role !== 'worker') {
      app = await buildHttpApp(deps, ROUTES, { ...opts.http, metricsRegistry: metrics.registry }, httpPlugins(deps));
      if (opts.listen !== false) {
        await app.listen({ port: config.port, host: config.host });
        const addr = app.server.address();
        if (addr && typeof addr === 'object') url = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
      } else {
        await app.ready();
      }
    }
    if (role !== 'api') {
      workers.push(
        ...startWorkers([
          // Nonces older than an hour can never be replayed: the ±300 s timestamp window refuses them.
          { name: 'nonce-pruner', intervalMs: 10 * 60_000, run: async () => void (await pruneNonces(db, 3600)) },
          { name: 'order-expiry', intervalMs: 1000, run: async () => void (await deps.orders.expireDue()) },
          // Unpaid machine-payment challenges are deleted in batches of 1000 once nothing can pay them.
          { name: 'mpp-challenge-pruner', intervalMs: 60_000, run: async () => void (await deps.mpp.pruneExpired()) },
          { name: 'portal-session-pruner', intervalMs: 10 * 60_000, run: async () => void (await portalAuth(deps).pruneExpired()) },
          // x402 settlements recorded but not sent (a crash), or sent but not yet deep enough.
          { name: 'x402-reconcile', intervalMs: 5_000, run: () => deps.x402.reconcile() },
        ]),
      );
      workers.push(...startChainWatchers(deps, { onTick: metrics.watcherTicked }));
      workers.push(startWebhookDispatcher(deps, { onRecorded: metrics.deliveries }));
      workers.push(...startSettlementWorkers(deps));
      workers.push(...startChainSettlements(deps));
      workers.push(...startWorkers([{ name: 'checkout-expiry', intervalMs: 1000, run: async () => void (await checkoutOf(deps).expireDue()) }]));
      workers.push(
        ...startWorkers([
          { name: 'card-expiry', intervalMs: 1000, run: async () => void (await cards.expireDue()) },
          // Processor events missed while down (Stripe: the events list); a no-op for TEST.
          { name: 'card-reconcile', intervalMs: 60_000, run: async () => void (await cards.reconcile()) },
        ]),
      );
      // Quick-pay sessions paid in several transfers: completed once the final short payments add up.
      workers.push(...startWorkers([{ name: 'quickpay-partial-payments', intervalMs: 2000, run: async () => void (await settleSummedPayments(deps)) }]));
    }
  } catch (err) {
    unobserve();
    await app?.close().catch(() => {});
    if (ownsDb) await db.close().catch(() => {});
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    deps,
    app,
    url,
    close: () =>
      (closing ??= (async () => {
        await Promise.all(workers.map((w) => w.stop()));
        unobserve();
        await app?.close();
        if (ownsDb) await db.close();
      })()),
  };
}
