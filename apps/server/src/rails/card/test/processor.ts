import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { CardEvent, CardProcessor, NotificationHeaders, RefundInput, RefundResult, StartedPayment, StartPaymentInput } from '../port.ts';
import { TEST_CARDS, brandOf, last4 } from './cards.ts';

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
  private readonly notificationKey: Buffer;

  /** `masterKey`: the deployment's MASTER_KEY; the notification key is derived from it. */
  constructor(masterKey: Buffer) {
    this.notificationKey = testNotificationKey(masterKey);
  }

  /**
   * Simulated processor notifications over HTTP (POST /card/v1/notifications/test), so the
   * notification path can be rehearsed like a real processor's: body \`{ "events": [...] }\`,
   * header \`x-tollgate-test-signature\`: hex HMAC-SHA256 of the raw body under a key derived
   * from MASTER_KEY ({@link signTestNotification}).
   */
  parseNotification(rawBody: string, headers: NotificationHeaders): { ok: true; events: CardEvent[] } | { ok: false; reason: string } {
    const sig = headers['x-tollgate-test-signature'];
    const expected = createHmac('sha256', this.notificationKey).update(rawBody, 'utf8').digest();
    if (typeof sig !== 'string' || !/^[0-9a-f]{64}$/.test(sig) || !timingSafeEqual(Buffer.from(sig, 'hex'), expected)) return { ok: false, reason: 'signature does not match' };
    let body: { events?: unknown };
    try {
      body = JSON.parse(rawBody) as { events?: unknown };
    } catch {
      return { ok: false, reason: 'body is not JSON' };
    }
    if (!Array.isArray(body.events)) return { ok: false, reason: 'events must be an array' };
    const events: CardEvent[] = [];
    for (const e of body.events as Record<string, unknown>[]) {
      if (typeof e?.id !== 'string' || typeof e.type !== 'string' || typeof e.payment_reference !== 'string') return { ok: false, reason: 'each event needs id, type and payment_reference' };
      if (!(EVENT_TYPES as readonly string[]).includes(e.type)) return { ok: false, reason: `unknown event type ${e.type.slice(0, 40)}` };
      events.push({
        id: e.id,
        type: e.type as CardEvent['type'],
        paymentReference: e.payment_reference,
        ...(typeof e.order_id === 'string' ? { orderId: e.order_id } : {}),
        ...(typeof e.amount_minor === 'string' && /^\d{1,30}$/.test(e.amount_minor) ? { amountMinor: BigInt(e.amount_minor) } : {}),
        ...(typeof e.currency === 'string' ? { currency: e.currency } : {}),
        ...(typeof e.charge_id === 'string' ? { chargeId: e.charge_id } : {}),
        ...(typeof e.refund_id === 'string' ? { refundId: e.refund_id } : {}),
        ...(typeof e.decline_code === 'string' ? { declineCode: e.decline_code } : {}),
        created: typeof e.created === 'number' ? e.created : 0,
      });
    }
    return { ok: true, events };
  }

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
    // Brand and last four travel with the events as a processor reports them; the number stays here.
    const base = { orderId: p.orderId, paymentReference: p.paymentReference, amountMinor: p.amountMinor, currency: p.currency, created: nowS, cardBrand: brandOf(cardNumber), cardLast4: last4(cardNumber) };
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

const EVENT_TYPES = ['payment.processing', 'payment.succeeded', 'payment.failed', 'refund.succeeded', 'refund.failed', 'dispute.opened', 'dispute.won', 'dispute.lost'] as const;

function testNotificationKey(masterKey: Buffer): Buffer {
  return createHmac('sha256', masterKey).update('tollgate card TEST notifications').digest();
}

/** The `x-tollgate-test-signature` of a TEST notification body (tests and rehearsal scripts). */
export function signTestNotification(masterKey: Buffer, rawBody: string): string {
  return createHmac('sha256', testNotificationKey(masterKey)).update(rawBody, 'utf8').digest('hex');
}
