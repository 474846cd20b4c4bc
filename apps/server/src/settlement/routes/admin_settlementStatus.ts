import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../http/route.ts';
import { AppError } from '../../http/errors.ts';
import { settlementStatus } from '../status.ts';

const Str = Type.String();
const NullStr = Type.Union([Type.String(), Type.Null()]);
const NullInt = Type.Union([Type.Integer(), Type.Null()]);

/**
 * A chain's settlement contract and executor as they are on chain now (settlement/status.ts):
 * contract check (code, executor, owner, pending owner, paused), pool balance per token, the
 * executor's gas balance and nonces, and every executor transaction not final yet with why.
 * Reads the chain on every call (operator tooling, not a hot path).
 */
export const adminSettlementStatus = defineRoute({
  method: 'GET',
  url: '/admin/v1/chains/:chain_id/settlement',
  auth: 'admin',
  summary: "A chain's DELEGATE settlement contract, pool balances and waiting executor transactions (operator)",
  tags: ['admin'],
  // Path values arrive as strings (no coercion): digits only, read as a number in the handler.
  params: Type.Object({ chain_id: Type.String({ pattern: '^[1-9][0-9]{0,15}$' }) }),
  response: {
    200: Type.Object({
      chain_id: Type.Integer(),
      contract: Type.Union([
        Type.Null(),
        Type.Object({
          address: Str,
          ok: Type.Boolean(),
          problem: Type.Union([Type.Object({ code: Str, message: Str }), Type.Null()]),
          owner: NullStr,
          pending_owner: NullStr,
          executor: NullStr,
          paused: Type.Union([Type.Boolean(), Type.Null()]),
          warnings: Type.Array(Str),
        }),
      ]),
      executor: Type.Object({ address: Str, native_balance_wei: NullStr, nonce_latest: NullInt, nonce_pending: NullInt }),
      balances: Type.Array(Type.Object({ symbol: Str, token: Str, amount_wei: NullStr })),
      pending: Type.Array(Type.Object({ order_id: Str, kind: Str, attempt: Type.Integer(), nonce: Type.Integer(), tx_hash: Str, status: Str, age_seconds: Type.Integer(), reason: Str })),
    }),
  },
  async handler(req, _reply, deps) {
    const out = await settlementStatus(deps, Number(req.params.chain_id));
    switch (out.kind) {
      case 'chain_not_supported':
        throw new AppError('chain_not_supported', `chain ${req.params.chain_id} is not configured`, 'chain_id');
      case 'delegate_not_enabled':
        throw new AppError('delegate_not_enabled', 'no executor key (SETTLEMENT_KEY) is configured', 'chain_id');
      case 'status':
        return out.view;
    }
  },
});
