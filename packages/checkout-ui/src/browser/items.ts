// The order summary's line items: shared by the page (page.ts) and the card flow (card.ts, a
// chunk of its own), so it lives apart from the screens (views.ts pulls in the QR code library).
import { isDecimalString, multiplyDecimal } from '../lib/money.ts';
import type { PublicSession } from '../lib/types.ts';
import { h } from './dom.ts';

/**
 * The line items with quantity, unit price and line total in `currency`: the session has one price
 * for every token it accepts, so the amounts are the same whichever token is selected.
 */
export function lineItems(s: PublicSession, currency: string) {
  return s.line_items.map((i) => {
    // `amount` is the price of one unit; the line shows quantity × unit and the exact line total.
    const unit = isDecimalString(i.amount) ? i.amount : undefined;
    return h(
      'li',
      {},
      h('span', { class: 'item-name' }, i.name, h('span', { class: 'qty' }, unit ? `${i.quantity} × ${unit} ${currency}` : `Quantity ${i.quantity}`)),
      unit ? h('span', { class: 'item-amount' }, `${multiplyDecimal(unit, i.quantity)} ${currency}`) : undefined,
    );
  });
}
