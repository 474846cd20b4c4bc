import type { AppDeps } from '../../deps.ts';
import { createCardProcessor } from './registry.ts';
import { CardService } from './service.ts';

const services = new WeakMap<object, CardService>();

/**
 * Builds the card rail of an app (composition root, once). Kept beside AppDeps rather than in it,
 * like checkoutOf: routes reach it with {@link cardsOf}.
 */
export async function initCards(deps: AppDeps): Promise<CardService> {
  const s = new CardService(deps, await createCardProcessor(deps.config));
  services.set(deps, s);
  return s;
}

/** The card rail of an app; throws when the composition root did not build it. */
export function cardsOf(deps: AppDeps): CardService {
  const s = services.get(deps);
  if (!s) throw new Error('card rail not initialised (initCards)');
  return s;
}
