import type { StripeSettings } from '../../../config/schema.ts';
import type { CardProcessor, RefundInput, RefundResult, StartedPayment, StartPaymentInput } from '../port.ts';

/** Stripe adapter (flow FIAT_STRIPE): being built; starting with card.processor STRIPE fails loudly until then. */
export class StripeCardProcessor implements CardProcessor {
  readonly name = 'STRIPE';
  constructor(_settings: StripeSettings) {
    throw new Error('the STRIPE card processor is not available in this build yet');
  }
  startPayment(_input: StartPaymentInput): Promise<StartedPayment> {
    throw new Error('unreachable');
  }
  refund(_input: RefundInput): Promise<RefundResult> {
    throw new Error('unreachable');
  }
}
