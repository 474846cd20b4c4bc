import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateWebhookSecret, WEBHOOK_EVENTS } from '@tollgate/protocol';
import { verifyWebhook, type MppPayment, type WebhookEvent, type X402Settlement } from '../../../../packages/sdk/src/index.ts';
import type { MppPaymentView } from '../../src/mpp/events.ts';
import { samplePayload } from '../../src/webhooks/samples.ts';
import { deliveryHeaders, envelopeBody } from '../../src/webhooks/signing.ts';
import type { X402SettlementView } from '../../src/x402/records.ts';
import { buildConfig } from '../helpers/server.ts';

/**
 * The SDK's typed payloads against what the server sends. The SDK cannot import the server, so its
 * X402Settlement and MppPayment are copies of the server's views: these compile-time checks fail
 * typecheck the moment either side changes alone. At run time, every event of WEBHOOK_EVENTS, as
 * `tollgate trigger` builds it and the delivery worker signs it, verifies with the SDK and narrows
 * to the payload the SDK declares for that name.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const x402Same: Same<X402SettlementView, X402Settlement> = true;
const mppSame: Same<MppPaymentView, MppPayment> = true;

/** One field the SDK types for each event, read through the narrowed union (exhaustive). */
function keyField(e: WebhookEvent): string | number | boolean | null {
  switch (e.event) {
    case 'order.payment_confirmed':
    case 'order.invoiced':
    case 'order.expired':
    case 'order.cancelled':
    case 'order.failed':
      return e.payload.status;
    case 'order.late_payment':
    case 'order.underpaid':
    case 'order.duplicate_payment':
      return e.payload.transfer.kind;
    case 'quickpay.checkout.completed':
      return e.payload.checkout_id;
    case 'fiat.payment.succeeded':
      return e.payload.held;
    case 'fiat.payment.refunded':
      return e.payload.refunded_total;
    case 'fiat.dispute.updated':
      return e.payload.dispute_status;
    case 'order.refunded':
      return e.payload.refund_id;
    case 'x402.settlement.confirmed':
      return e.payload.settlement_id;
    case 'mpp.payment.confirmed':
      return e.payload.challenge_id;
    default: {
      const never: never = e;
      throw new Error(`untyped event ${(never as { event: string }).event}`);
    }
  }
}

describe('SDK webhook types cover every event the server emits', () => {
  it('the SDK payload copies equal the server views (compile time)', () => {
    assert.deepEqual([x402Same, mppSame], [true, true]);
  });

  it('every WEBHOOK_EVENTS sample verifies with the SDK and narrows to its typed payload', () => {
    const config = buildConfig();
    const secret = generateWebhookSecret();
    const now = new Date();
    const seen = WEBHOOK_EVENTS.map((event, i) => {
      const { payload } = samplePayload(event, { merchantId: 'mch_test', config, now });
      const body = envelopeBody(`evt_${i}`, event, JSON.stringify(payload), now);
      const headers = deliveryHeaders({ secrets: { current: secret }, event, eventId: `evt_${i}`, timestampSeconds: Math.floor(now.getTime() / 1000), rawBody: body });
      const v = verifyWebhook({ secret, rawBody: body, headers, now: () => now.getTime() });
      assert.ok(v.ok, `${event}: ${v.ok ? '' : v.reason}`);
      assert.equal(v.event.event, event);
      const field = keyField(v.event);
      assert.notEqual(field, undefined, `${event}: the field the SDK types is in the payload`);
      return [event, typeof field];
    });
    assert.deepEqual(Object.fromEntries(seen), {
      'order.payment_confirmed': 'string',
      'order.invoiced': 'string',
      'order.expired': 'string',
      'order.cancelled': 'string',
      'order.failed': 'string',
      'quickpay.checkout.completed': 'string',
      'fiat.payment.succeeded': 'boolean',
      'order.late_payment': 'string',
      'order.underpaid': 'string',
      'order.duplicate_payment': 'string',
      'fiat.payment.refunded': 'string',
      'fiat.dispute.updated': 'string',
      'order.refunded': 'string',
      'x402.settlement.confirmed': 'string',
      'mpp.payment.confirmed': 'string',
    });
  });
});
