import type { Clock } from './clock.ts';
import type { Config } from './config/schema.ts';
import type { Database } from './db/database.ts';
import type { MerchantService } from './merchants/service.ts';
import type { Mpp } from './mpp/index.ts';
import type { OrderService } from './orders/service.ts';
import type { DelegateService } from './settlement/delegate.ts';
import type { X402Facilitator } from './x402/index.ts';

// Route handlers receive AppDeps: http/route.ts's RouteDeps (what http/ itself uses) is extended
// here, so the core's http/ never imports this composition-root module.
declare module './http/route.ts' {
  interface RouteDeps extends AppDeps {}
}

/**
 * Everything a route or worker may use, built once by the composition root (`main.ts`).
 * Routes receive it as their third argument; they never import a service module's state.
 */
export interface AppDeps {
  config: Config;
  db: Database;
  clock: Clock;
  merchants: MerchantService;
  orders: OrderService;
  mpp: Mpp;
  /** DELEGATE mode: callback registrations, order plans, calldata signatures, refunds. */
  delegate: DelegateService;
  /** The x402 v2 facilitator (/x402/v2). */
  x402: X402Facilitator;
}
