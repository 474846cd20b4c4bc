import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { reconcile } from '../../orders/reconciliation.ts';
import { ReconciledTransferSchema } from '../../orders/routes/admin_reconciliation.ts';
import { merchantOf } from '../http.ts';

/** How far back the portal looks for unclaimed transfers, and how many it shows per chain. */
const WINDOW_DAYS = 90;
const PER_CHAIN = 200;

/**
 * The merchant's unclaimed transfers: money that reached one of its wallets and paid nothing in
 * Tollgate (no order, challenge or settlement claimed it; docs/attribution.md). The portal's view
 * of the operator's reconciliation, limited to this merchant's wallets and the last 90 days.
 */
export const portalListUnclaimedTransfers = defineRoute({
  method: 'GET',
  url: '/portal/api/unclaimed-transfers',
  auth: 'portal',
  summary: "Transfers to the merchant's wallets that nothing claimed (last 90 days, every configured chain)",
  tags: ['portal'],
  response: { 200: Type.Object({ data: Type.Array(ReconciledTransferSchema), since: Type.String() }, { additionalProperties: false }) },
  async handler(req, _reply, deps) {
    const merchantId = merchantOf(req.portal);
    const since = new Date(deps.clock.now() - WINDOW_DAYS * 86_400_000);
    const chains = [...deps.config.chains.map((c) => c.chainId), ...(deps.config.solanaChains ?? []).map((c) => c.chainId)];
    const data = [];
    for (const chainId of chains) data.push(...(await reconcile(deps.db, { chainId, merchantId, since, unclaimedOnly: true, limit: PER_CHAIN })));
    return { data, since: since.toISOString() };
  },
});
