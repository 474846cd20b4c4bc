import { createHash, randomBytes } from 'node:crypto';
import type { CardEvent, CardProcessor, RefundInput, RefundResult, StartedPayment, StartPaymentInput } from '../port.ts';
import { TEST_CARDS } from './cards.ts';

/**
 * The built-in TEST processor (flow FIAT_TEST): no money moves. The payer types a test card into
 * Tollgate's own card form (packages/checkout-ui); routes/public_testCardPayment.ts hands the
 * number to {@link TestCardProcessor.charge}, which answers with the notifications a real
 * processor would send. Operators rehearse the other branches (delayed completion, refunds,
 * disputes) with {@link TestCardProcessor.simulate} (admin route and `tollgate card simulate`).
 *
 * Refused in production: config/load.ts rejects `card.processor: TEST` there, and registry.ts
 * never picks it as a default outside the test environment.
 */
export type SimulatedScenario = 'succeeded' | 'declined' | 'processing' | 'duplicate' | 'refund' | 'dispute_opened' | 'dispute_won' | 'dispute_lost';
export const SIMULATED_SCENARIOS: readonly SimulatedScenario[] = ['succeeded', 'declined', 'processing', 'duplicate', 'refund', 'dispute_opened', 'dispute_won', 'dispute_lost'];

const digest = (s: string, n = 24) => createHash('sha256').update(s).digest('hex').slice(0, n);

export class TestCardProcessor implements CardProcessor {
  readonly name = 'TEST';

  /** Deterministic in the idempotency key: the same start returns the same payment reference. */
  async startPayment(input: StartPaymentInput): Promise<StartedPayment> {
    return { paymentReference: `tpi_${digest(input.idempotencyKey)}`, next: { type: 'card_form' } };
  }

  /** Refunds always succeed at once (the same key gives the same refund id). */
  async refund(input: RefundInput): Promise<RefundResult> {
    return { refundId: `tre_${digest(input.idempotencyKey)}`, status: 'succeeded' };
  }

  /**
   * The notifications a charge of `cardNumber` (normalized digits) produces for a payment.
   * Apply them as ONE batch: a double charge or a dispute then holds the order before anything
   * is invoiced.
   */
  charge(cardNumber: string, p: { orderId: string; paymentReference: string; amountMinor: bigint; currency: string }, nowS: number): CardEvent[] {
    const outcome = TEST_CARDS[cardNumber]?.outcome;
    const base = { orderId: p.orderId, paymentReference: p.paymentReference, amountMinor: p.amountMinor, currency: p.currency, created: nowS };
    const ev = (type: CardEvent['type'], extra: Partial<CardEvent> = {}): CardEvent => ({ ...base, id: newEventId(), type, ...extra });
    switch (outcome) {
      case 'succeeded':
        return [ev('payment.succeeded', { chargeId: newChargeId() })];
      case 'processing':
        return [ev('payment.processing')];
      case 'duplicate':
        return [ev('payment.succeeded', { chargeId: newChargeId() }), ev('payment.succeeded', { chargeId: newChargeId() })];
      case 'disputed':
        return [ev('payment.succeeded', { chargeId: newChargeId() }), ev('dispute.opened')];
      case 'declined':
        return [ev('payment.failed', { declineCode: 'card_declined' })];
      case 'insufficient_funds':
        return [ev('payment.failed', { declineCode: 'insufficient_funds' })];
      case undefined:
        return [ev('payment.failed', { declineCode: 'test_card_unknown' })];
    }
  }

  /** The notifications of an operator-driven scenario (`refund` goes through the service instead). */
  simulate(scenario: Exclude<SimulatedScenario, 'refund'>, p: { orderId: string; paymentReference: string; amountMinor: bigint; currency: string }, nowS: number): CardEvent[] {
    const base = { orderId: p.orderId, paymentReference: p.paymentReference, amountMinor: p.amountMinor, currency: p.currency, created: nowS };
    const ev = (type: CardEvent['type'], extra: Partial<CardEvent> = {}): CardEvent => ({ ...base, id: newEventId(), type, ...extra });
    switch (scenario) {
      case 'succeeded':
        return [ev('payment.succeeded', { chargeId: newChargeId() })];
      case 'declined':
        return [ev('payment.failed', { declineCode: 'card_declined' })];
      case 'processing':
        return [ev('payment.processing')];
      case 'duplicate':
        return [ev('payment.succeeded', { chargeId: newChargeId() })];
      case 'dispute_opened':
        return [ev('dispute.opened')];
      case 'dispute_won':
        return [ev('dispute.won')];
      case 'dispute_lost':
        return [ev('dispute.lost')];
    }
  }
}

function newEventId(): string {
  return `tev_${randomBytes(12).toString('hex')}`;
}
function newChargeId(): string {
  return `tch_${randomBytes(12).toString('hex')}`;
}
