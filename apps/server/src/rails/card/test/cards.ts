/**
 * The TEST processor's card numbers: the well-known test numbers card processors publish, each
 * with the outcome it simulates. Any other number that passes the Luhn check is declined
 * (`test_card_unknown`); a number failing it is refused as invalid input.
 */
export type TestCardOutcome = 'succeeded' | 'declined' | 'insufficient_funds' | 'processing' | 'duplicate' | 'disputed';

export const TEST_CARDS: Readonly<Record<string, { outcome: TestCardOutcome; label: string }>> = Object.freeze({
  '4242424242424242': { outcome: 'succeeded', label: 'payment succeeds' },
  '4000000000000002': { outcome: 'declined', label: 'declined (card_declined)' },
  '4000000000009995': { outcome: 'insufficient_funds', label: 'declined (insufficient_funds)' },
  '4000000000003253': { outcome: 'processing', label: 'needs extra time: processing until the operator completes it' },
  '4000000000001018': { outcome: 'duplicate', label: 'charged twice: a duplicate payment, the order is held' },
  '4000000000000259': { outcome: 'disputed', label: 'succeeds, then the payer disputes it: the order is held' },
});

/** Digits only (spaces and dashes removed), or undefined when it is not a plausible card number. */
export function normalizeCardNumber(raw: string): string | undefined {
  const digits = raw.replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(digits)) return undefined;
  return luhnValid(digits) ? digits : undefined;
}

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The last four digits: the only part of a card number Tollgate ever keeps or shows. */
export function last4(digits: string): string {
  return digits.slice(-4);
}

/** The card network of a number by its leading digits (what a processor reports as the brand). */
export function brandOf(digits: string): string {
  if (digits.startsWith('4')) return 'visa';
  if (/^(5[1-5]|2[2-7])/.test(digits)) return 'mastercard';
  if (/^3[47]/.test(digits)) return 'amex';
  return 'unknown';
}
