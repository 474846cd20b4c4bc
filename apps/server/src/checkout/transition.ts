import type { Queryable } from '../db/database.ts';
import * as repo from './repo.ts';
import { nextSessionStatus, sessionSourcesOf, sessionTargetOf, type SessionStatus, type SessionTrigger } from './states.ts';

class IllegalSessionTransitionError extends Error {
  constructor(from: SessionStatus, trigger: SessionTrigger) {
    super(`illegal checkout session transition: ${trigger} from ${from}`);
  }
}

/**
 * The one way a checkout session changes status, inside the caller's transaction: checks the move
 * against the transition table (a programming error throws), applies it as a conditional UPDATE
 * from `from` (or from every status the table allows for `trigger`), and writes the audit row —
 * the same contract as orders/transition.ts. A lost race returns undefined.
 */
export async function transitionSession(
  tx: Queryable,
  a: { id: string; trigger: SessionTrigger; from?: SessionStatus; patch?: repo.SessionPatch; orderId?: string | undefined; detail?: unknown },
): Promise<{ row: repo.SessionRow; from: SessionStatus } | undefined> {
  if (a.from !== undefined && !nextSessionStatus(a.from, a.trigger)) throw new IllegalSessionTransitionError(a.from, a.trigger);
  const sources = a.from !== undefined ? [a.from] : sessionSourcesOf(a.trigger);
  return repo.updateSessionStatus(tx, {
    id: a.id,
    sources,
    to: sessionTargetOf(a.trigger),
    trigger: a.trigger,
    patch: a.patch,
    orderId: a.orderId,
    detail: a.detail,
  });
}
