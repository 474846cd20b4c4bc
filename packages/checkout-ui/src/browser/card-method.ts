// The card method as the choose screen shows it ("Pay by card", or a card-only session) and the
// way into the card flow (card.ts). On the checkout page the flow is a lazily loaded chunk
// (chunk.ts): only a payer who picks the card downloads the form and its polling.
import type { ApiError, CheckoutApi } from '../lib/api.ts';
import type { PublicSession } from '../lib/types.ts';
import { loadChunk } from './chunk.ts';
import { h } from './dom.ts';

export interface CardContext {
  api: CheckoutApi;
  session: () => PublicSession;
  setScreen(node: HTMLElement): void;
  say(text: string): void;
  /** the page's summary (items and total), to show the card total */
  summary(): { items: HTMLElement; total: HTMLElement } | undefined;
  /** session COMPLETED / FAILED / EXPIRED: the page's final screens */
  completed(card: PaidCard): void;
  failed(): void;
  expired(): void;
  /** a 409/410/404 while starting: let the page re-read the session and route again */
  refused(e: ApiError): unknown;
  /** the processor has the payment (processing or held): stop the countdown, drop "cancel" */
  paid(): void;
  /** back to the choice of payment method (shown only when crypto is offered too) */
  back: (() => void) | undefined;
}

/** What the receipt says of a card payment: its order, and the card when this page took it. */
export interface PaidCard {
  orderId?: string | undefined;
  last4?: string | undefined;
}

const cardLine = (s: PublicSession) => `${s.fiat_amount ?? ''} ${s.fiat_currency ?? ''}`.trim();

/** The "Pay by card" block of the choose screen. */
export function cardMethod(s: PublicSession, onCard: () => void) {
  return h(
    'div',
    { class: 'method', 'data-method': 'card' },
    h('h3', {}, 'Pay by card'),
    h('p', { class: 'muted small' }, `Card payments are charged ${cardLine(s)}, set by the merchant (not converted from the token price).`),
    h('button', { type: 'button', class: 'secondary', onclick: onCard }, `Pay ${cardLine(s)} by card`),
  );
}

/** A card-only session: the card amount and the one way to pay. */
export function cardOnlyScreen(s: PublicSession, onCard: () => void) {
  return h('section', { 'aria-labelledby': 'card-only-h', 'data-screen': 'choose' }, h('h2', { id: 'card-only-h', tabindex: -1 }, `Pay ${cardLine(s)}`), cardMethod(s, onCard));
}

/** Starts (or resumes) the card payment: card.ts's startCard, loaded on first use. */
export const startCard = (c: CardContext, opts?: { resume?: boolean }) =>
  loadChunk<{ startCard(c: CardContext, opts?: { resume?: boolean }): Promise<void> }>('card').then(
    (m) => m.startCard(c, opts),
    () => c.say('The card payment could not be loaded. Check your connection and try again.'),
  );
