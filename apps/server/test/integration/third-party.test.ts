import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { PaymentRequiredV2Schema, validatePaymentRequired } from '@x402/core/schemas';
import { buildPaymentTerms, paymentRequired } from '../../src/orders/terms.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, setupMerchant } from '../helpers/orders.ts';
import { fakeChain, startTestServer, type Creds, type TestServer } from '../helpers/server.ts';

/**
 * What third parties accept, checked with their own code rather than ours: the x402 reference
 * package (`@x402/core`) reads the 402 body and the PAYMENT-REQUIRED header, and a real OpenAPI
 * validator reads /openapi.json. (Webhook deliveries are verified with `standardwebhooks` in
 * webhooks-delivery.test.ts.)
 */
for (const backend of backends()) {
  describe(`third-party validation (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    before(async () => {
      s = await startTestServer({ backend, chains: [fakeChain()] });
      m = await setupMerchant(s);
    });
    after(() => s.close());

    it("the 402 body and the decoded PAYMENT-REQUIRED header pass @x402/core's schema", async () => {
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ amount_wei: '1234567' }) });
      assert.equal(r.status, 402, r.text);
      const body = PaymentRequiredV2Schema.safeParse(r.body);
      assert.equal(body.success, true, JSON.stringify(body.error?.issues));
      assert.equal(body.data!.accepts[0]!.amount, '1234567');

      const decoded = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
      // validatePaymentRequired throws a ZodError listing every issue (v1/v2 by x402Version).
      assert.equal(validatePaymentRequired(decoded).x402Version, 2);
      assert.deepEqual(decoded, r.body);
    });

    it('/openapi.json validates with @apidevtools/swagger-parser, zero errors', async () => {
      const r = await s.request('GET', '/openapi.json');
      assert.equal(r.status, 200);
      // validate() dereferences in place: give it a copy, and fail with every message it reports.
      await SwaggerParser.validate(structuredClone(r.body));
      // Control: the same validator does reject a broken copy (a response without its required
      // description), so the pass above is not a validator that accepts anything.
      const broken = structuredClone(r.body);
      const op = broken.paths['/api/v1/orders'].post;
      delete op.responses['402'].description;
      await assert.rejects(SwaggerParser.validate(broken), /402|description|responses/);
    });
  });
}

describe('x402 terms at the edge of expiry', () => {
  it('an order expiring within the second still offers maxTimeoutSeconds >= 1 (x402 requires a positive number)', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0, 500);
    const order = {
      id: 'ord_x',
      dapp_order_id: 'edge',
      flow: 'ERC20_DIRECT',
      chain_id: 31337,
      pay_to_chain_id: 31337,
      token_symbol: 'USDC',
      token_contract: fakeChain().tokens[0]!.address,
      decimals: 6,
      pay_to_address: '0xa0ee7a142d267c1f36714e4a8f75612f20a79720',
      amount_wei: '1',
      expires_at: new Date(now - 200),
    };
    const terms = buildPaymentTerms(order, { baseUrl: 'http://127.0.0.1:8402', nowMs: now, receiveType: 'DIRECT' });
    validatePaymentRequired(decodePaymentRequiredHeader(paymentRequired(terms).header));
    assert.equal(terms.accepts[0].maxTimeoutSeconds, 1);
  });
});
