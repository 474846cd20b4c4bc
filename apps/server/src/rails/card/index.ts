import { createCardProcessor } from './registry.ts';
import { CardService, type CardContext } from './service.ts';

const services = new WeakMap<object, CardService>();

/**
 * Builds the card rail of an app (composition root, once, with its deps). Kept beside AppDeps
 * rather than in it, like checkoutOf: routes reach it with {@link cardsOf} and the same object.
 */
export async function initCards(deps: CardContext): Promise<CardService> {
  const s = new CardService(deps, await createCardProcessor(deps.config));
  services.set(deps, s);
  return s;
}

/** The card rail of an app; throws when the composition root did not build it. */
export function cardsOf(deps: object): CardService {
  const s = services.get(deps);
  if (!s) throw new Error('card rail not initialised (initCards)');
  return s;
}
