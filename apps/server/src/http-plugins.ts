import type { AppDeps } from './deps.ts';
import type { HttpPlugins } from './http/app.ts';
import { registerQuickpayPages } from './hosted/quickpay.ts';
import { registerHostedPages } from './hosted/routes.ts';
import { authenticatePortal } from './portal/http.ts';
import { registerPortalPages } from './portal/pages.ts';

/**
 * What the composition root plugs into the core's HTTP app (http/app.ts): the hosted checkout,
 * quick-pay and portal pages, the services' group-commit counters (/metrics), and the portal's
 * authentication of `auth: 'portal'` routes (least role: viewer).
 */
export function httpPlugins(deps: AppDeps): HttpPlugins {
  return {
    pages: [registerHostedPages, registerQuickpayPages, registerPortalPages],
    batchers: {
      orders: () => deps.orders.batchStats(),
      nonces: () => deps.merchants.nonceBatchStats(),
      order_status: () => deps.orders.statusBatchStats(),
      mpp_claims: () => deps.mpp.claimBatchStats(),
      mpp_reads: () => deps.mpp.readBatchStats(),
    },
    portal: (req, minRole) => authenticatePortal(req, deps, minRole ?? 'viewer'),
  };
}
