import { Type } from '@sinclair/typebox';
import { AppError } from '../../http/errors.ts';
import { defineRoute } from '../../http/route.ts';
import { parseRfc3339 } from '../../http/time.ts';
import { reconcile, type ReconciliationQuery } from '../reconciliation.ts';

const Claim = Type.Union([Type.Object({ purpose: Type.Union(['order', 'mpp_challenge', 'x402_settlement', 'refund'].map((p) => Type.Literal(p))), id: Type.String() }, { additionalProperties: false }), Type.Null()]);

export const ReconciledTransferSchema = Type.Object(
  {
    chain_id: Type.Integer(),
    tx_hash: Type.String(),
    log_index: Type.Integer(),
    block_number: Type.Integer(),
    block_time: Type.Union([Type.String(), Type.Null()]),
    token_contract: Type.String(),
    from_address: Type.String(),
    to_address: Type.String(),
    amount_wei: Type.String({ pattern: '^[0-9]+$' }),
    merchant_id: Type.Union([Type.String(), Type.Null()]),
    claimed_by: Claim,
  },
  { additionalProperties: false },
);

const MAX_LIMIT = 1000;

/** Reads the shared query of the reconciliation (admin and portal): bad input is a 400 naming the parameter. */
function reconciliationQuery(q: { chain_id?: string; since?: string; until?: string; after?: string; limit?: string; unclaimed?: string }, merchantId?: string): ReconciliationQuery {
  if (q.chain_id === undefined || !/^[0-9]{1,10}$/.test(q.chain_id) || Number(q.chain_id) > 2 ** 31 - 1) {
    throw new AppError('invalid_request', 'chain_id is required: a configured chain id', 'chain_id');
  }
  const time = (v: string | undefined, p: string) => {
    if (v === undefined) return undefined;
    const d = parseRfc3339(v);
    if (!d) throw new AppError('invalid_request', `${p} must be an RFC 3339 time between 1970 and 9999`, p);
    return d;
  };
  let after: ReconciliationQuery['after'];
  if (q.after !== undefined) {
    const m = /^([0-9]{1,18}):([0-9]{1,9})$/.exec(q.after);
    if (!m) throw new AppError('invalid_request', 'after must be BLOCK:LOG_INDEX of the last transfer of the previous page', 'after');
    after = { block: BigInt(m[1]!), logIndex: Number(m[2]) };
  }
  const limit = q.limit === undefined ? 500 : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new AppError('invalid_request', `limit must be an integer from 1 to ${MAX_LIMIT}`, 'limit');
  return { chainId: Number(q.chain_id), merchantId, since: time(q.since, 'since'), until: time(q.until, 'until'), after, limit, unclaimedOnly: q.unclaimed === 'true' };
}

const ReconciliationQuerySchema = Type.Object(
  {
    chain_id: Type.Optional(Type.String({ maxLength: 12 })),
    since: Type.Optional(Type.String({ maxLength: 40 })),
    until: Type.Optional(Type.String({ maxLength: 40 })),
    after: Type.Optional(Type.String({ maxLength: 40 })),
    limit: Type.Optional(Type.String({ maxLength: 5 })),
    unclaimed: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
    merchant_id: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

/**
 * Every incoming transfer to the deployment's addresses on a chain, and what claimed it
 * (docs/attribution.md, "Reconciliation"). Oldest first; page with `after`.
 */
export const adminReconciliation = defineRoute({
  method: 'GET',
  url: '/admin/v1/reconciliation',
  auth: 'admin',
  summary: 'Incoming transfers on a chain and what claimed each (orders, machine payments, x402), or nothing',
  tags: ['admin'],
  querystring: ReconciliationQuerySchema,
  response: {
    200: Type.Object(
      {
        chain_id: Type.Integer(),
        data: Type.Array(ReconciledTransferSchema),
        summary: Type.Object({ transfers: Type.Integer(), claimed: Type.Integer(), unclaimed: Type.Integer() }, { additionalProperties: false }),
        next_after: Type.Union([Type.String(), Type.Null()]),
      },
      { additionalProperties: false },
    ),
  },
  async handler(req, _reply, deps) {
    const q = reconciliationQuery(req.query, req.query.merchant_id);
    if (!deps.config.chains.some((c) => c.chainId === q.chainId) && !(deps.config.solanaChains ?? []).some((c) => c.chainId === q.chainId)) throw new AppError('invalid_request', `chain ${q.chainId} is not configured`, 'chain_id');
    const data = await reconcile(deps.db, q);
    const claimed = data.filter((t) => t.claimed_by !== null).length;
    const last = data.length === q.limit ? data[data.length - 1] : undefined;
    return {
      chain_id: q.chainId,
      data,
      summary: { transfers: data.length, claimed, unclaimed: data.length - claimed },
      next_after: last ? `${last.block_number}:${last.log_index}` : null,
    };
  },
});
