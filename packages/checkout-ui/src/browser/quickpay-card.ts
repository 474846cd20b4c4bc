// The card rail of the quick-pay link page: the checkout page's card screens (card-method.ts,
// card.ts) over a quick-pay card session. The page (quickpay.ts) keeps its screens, its summary
// and the final receipt; this maps the checkout card API onto the quick-pay routes and holds the
// card attempt (its session and order) the receipt and a reload need.
import { ApiError, type CheckoutApi } from '../lib/api.ts';
import { idempotencyKey, type PublicLink, type QuickPayApi, type QuickPaySession } from '../lib/quickpay.ts';
import type { PublicSession } from '../lib/types.ts';
import type { CardContext } from './card-method.ts';
import { h } from './dom.ts';
import { cardStart } from './quickpay-session.ts';
import { messageScreen } from './views.ts';

/** What the card rail uses of the page (read when called: the page loads its link after start). */
export interface QuickPayCardPage {
  api(): QuickPayApi;
  link(): PublicLink;
  /** this page load's nonce, part of every idempotency key it sends */
  pageNonce: string;
  /** the payer's reference as typed now, kept by the page for the receipt */
  takeMemo(): string | undefined;
  setScreen(node: HTMLElement): void;
  say(text: string): void;
  /** the summary's total element, once the page is drawn */
  total(): HTMLElement | undefined;
  finish(node: HTMLElement): void;
  completed(orderId: string | undefined, last4: string | undefined): void;
  failed(): void;
  expired(): void;
  /** back to the link's options (the crypto rail) */
  showLink(): void;
}

/** The card attempt of one page: its quick-pay session (once opened) and that session's order. */
export class QuickPayCard {
  session: string | undefined;
  order: string | undefined;
  readonly #page: QuickPayCardPage;
  constructor(page: QuickPayCardPage) {
    this.#page = page;
  }

  /** The checkout card screens' context (card-method.ts startCard) for this link. */
  context(): CardContext {
    const page = this.#page;
    const link = page.link();
    return {
      api: this.#api(),
      // card.ts reads the merchant's name and the card price from the session: the link has both.
      session: () => ({ merchant: link.merchant, line_items: [], fiat_amount: link.fiat_amount, fiat_currency: link.fiat_currency }) as unknown as PublicSession,
      setScreen: (node) => page.setScreen(node),
      say: (text) => page.say(text),
      // The card amount as the summary's total; the product's name stays.
      summary: () => {
        const total = page.total();
        return total && { items: h('ul'), total };
      },
      completed: (card) => page.completed(card.orderId, card.last4),
      failed: () => page.failed(),
      expired: () => page.expired(),
      refused: (e: ApiError) => (e.status === 410 ? page.finish(messageScreen('unavailable', 'warn', 'This link takes no more payments', e.message)) : page.say(e.message)),
      paid: () => undefined,
      back:
        link.payment_options.length > 0
          ? () => {
              this.session = undefined;
              history.replaceState(null, '', location.pathname);
              page.showLink();
            }
          : undefined,
    };
  }

  /** The checkout card API (card.ts) mapped onto the quick-pay routes: card() opens the card session once. */
  #api(): CheckoutApi {
    const page = this.#page;
    const api = page.api();
    const unsupported = () => Promise.reject(new ApiError(400, 'invalid_request', 'not available on a payment link'));
    return {
      session: unsupported,
      bind: unsupported,
      solanaTransaction: unsupported,
      status: async () => {
        const s = await api.session(this.session!);
        return { status: s.status === 'PAYMENT_CONFIRMED' ? 'OPEN' : s.status, ...(s.order_id ? { order_id: s.order_id } : {}), ...(s.order_status ? { order_status: s.order_status } : {}) } as Awaited<ReturnType<CheckoutApi['status']>>;
      },
      card: async () => {
        let s: QuickPaySession;
        if (this.session) s = await api.session(this.session);
        else {
          const memo = page.takeMemo();
          const body: Record<string, unknown> = { rail: 'card', ...(memo ? { memo } : {}) };
          body.idempotency_key = idempotencyKey(page.pageNonce, body);
          s = await api.open(body);
          this.session = s.session_id;
          history.replaceState(null, '', `${location.pathname}#${s.session_id}`);
        }
        this.order = s.order_id ?? s.terms?.order_id;
        return cardStart(s, page.link());
      },
      testCard: (c) => api.testCard(this.session!, c),
      get clockOffset() {
        return api.clockOffset;
      },
    };
  }
}
