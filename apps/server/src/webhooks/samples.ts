import { newId, type WebhookEventName } from '@tollgate/protocol';
import type { Config } from '../config/schema.ts';

/**
 * Realistic test payloads for `tollgate trigger`: the same shape as the real event (docs/webhooks.md), with
 * made-up identifiers and two marker fields, `livemode: false` and `test: true`, so a receiver can
 * tell a triggered event from a real one and must never fulfil it.
 */
export function samplePayload(event: WebhookEventName, ctx: { merchantId: string; config: Config; wallet?: string | undefined; now: Date }): { payload: Record<string, unknown>; orderId: string } {
  const chain = ctx.config.chains[0];
  const token = chain?.tokens[0];
  const nowS = Math.floor(ctx.now.getTime() / 1000);
  const iso = ctx.now.toISOString();
  const orderId = newId('ord');
  const txHash = `0x${'ab'.repeat(32)}`;
  const marker = { livemode: false, test: true };
  const order = (status: string, extra: Record<string, unknown> = {}) => ({
    order_id: orderId,
    merchant_id: ctx.merchantId,
    dapp_order_id: `test_${orderId.slice(4, 14)}`,
    flow: 'ERC20_DIRECT',
    chain_id: chain?.chainId ?? 31337,
    pay_to_chain_id: chain?.chainId ?? 31337,
    token_symbol: token?.symbol ?? 'USDC',
    token_contract: token?.address ?? `0x${'00'.repeat(19)}01`,
    from_address: `0x${'11'.repeat(20)}`,
    pay_to_address: ctx.wallet ?? `0x${'22'.repeat(20)}`,
    amount_wei: '1000000',
    status,
    expires_at: nowS + 600,
    created_at: iso,
    updated_at: iso,
    ...extra,
    ...marker,
  });
  const paid = { tx_hash: txHash, log_index: 0, block_number: 1234, confirmations: chain?.confirmations ?? 1, paid_amount_wei: '1000000', confirmed_at: iso };
  switch (event) {
    case 'order.payment_confirmed':
      return { orderId, payload: order('PAYMENT_CONFIRMED', paid) };
    case 'order.invoiced':
      return { orderId, payload: order('INVOICED', { ...paid, confirmations: chain?.finalityConfirmations ?? 2, invoiced_at: iso }) };
    case 'order.expired':
      return { orderId, payload: order('EXPIRED', { expires_at: nowS }) };
    case 'order.cancelled':
      return { orderId, payload: order('CANCELLED') };
    case 'order.failed':
      return { orderId, payload: order('FAILED', { failure_reason: 'test failure' }) };
    case 'quickpay.checkout.completed':
      return {
        orderId,
        payload: {
          checkout_id: newId('cs'),
          order_id: orderId,
          order_status: 'INVOICED',
          tx_hash: txHash,
          client_reference_id: 'test_reference',
          line_items: [{ name: 'Test item', quantity: 1, unit_amount: '1.00' }],
          public_metadata: {},
          ...marker,
        },
      };
    case 'fiat.payment.succeeded':
      return {
        orderId,
        payload: {
          order_id: orderId,
          checkout_id: newId('cs'),
          processor: 'TEST',
          payment_reference: `pay_test_${orderId.slice(4, 16)}`,
          currency: 'USD',
          amount: '1.00',
          held: false,
          ...marker,
        },
      };
    case 'fiat.payment.refunded':
    case 'fiat.dispute.updated': {
      const card = { order_id: orderId, checkout_id: newId('cs'), processor: 'TEST', payment_reference: `tpi_${orderId.slice(4, 16)}`, currency: 'USD', order_status: 'INVOICED' };
      return event === 'fiat.payment.refunded'
        ? { orderId, payload: { ...card, refund_id: `rf_${orderId.slice(4, 16)}`, amount: '1.00', refunded_total: '1.00', ...marker } }
        : { orderId, payload: { ...card, dispute_status: 'opened', amount: '1.00', ...marker } };
    }
    case 'order.refunded':
      return {
        orderId,
        payload: {
          refund_id: `rf_${orderId.slice(4, 16)}`,
          order_id: orderId,
          rail: 'direct',
          amount: '1.00',
          amount_base_units: '1000000',
          currency: token?.symbol ?? 'USDC',
          status: 'succeeded',
          requested_by: 'merchant',
          chain_id: chain?.chainId ?? 31337,
          token_contract: token?.address ?? `0x${'00'.repeat(19)}01`,
          from_address: ctx.wallet ?? `0x${'22'.repeat(20)}`,
          to_address: `0x${'11'.repeat(20)}`,
          tx_hash: txHash,
          created_at: iso,
          completed_at: iso,
          order_status: 'INVOICED',
          refunded_amount: '1.00',
          ...marker,
        },
      };
    case 'order.late_payment':
    case 'order.underpaid':
    case 'order.duplicate_payment': {
      const kind = event === 'order.late_payment' ? 'late' : event === 'order.underpaid' ? 'underpaid' : 'duplicate';
      const status = event === 'order.late_payment' ? 'EXPIRED' : event === 'order.underpaid' ? 'CHECKOUT_VERIFIED' : 'INVOICED';
      const amount = event === 'order.underpaid' ? '900000' : '1000000';
      const transfer = { tx_hash: txHash, log_index: 0, block_number: 1234, from_address: `0x${'11'.repeat(20)}`, amount_wei: amount, kind, orphaned: false, accepted: false, confirmations: 1 };
      return { orderId, payload: order(status, { needs_reconciliation: true, transfer }) };
    }
    case 'x402.settlement.confirmed':
      return {
        orderId,
        payload: {
          settlement_id: `x4a_${'0'.repeat(32)}`,
          network: `eip155:${chain?.chainId ?? 31337}`,
          chain_id: chain?.chainId ?? 31337,
          token_contract: token?.address ?? `0x${'00'.repeat(19)}01`,
          token_symbol: token?.symbol ?? 'USDC',
          payer: `0x${'11'.repeat(20)}`,
          pay_to: ctx.wallet ?? `0x${'22'.repeat(20)}`,
          amount_wei: '10000',
          tx_hash: txHash,
          status: 'confirmed',
          block_number: 1234,
          created_at: iso,
          ...marker,
        },
      };
    case 'mpp.payment.confirmed': {
      const claims = {
        challenge_id: `ch_${'0'.repeat(38)}`,
        merchant_id: ctx.merchantId,
        route_canonical: 'GET:api:data',
        request_canonical: 'GET:api:data',
        chain_id: chain?.chainId ?? 31337,
        tx_hash: txHash,
        log_index: 0,
        amount_wei: '10000',
        payer: `0x${'11'.repeat(20)}`,
        recipient: ctx.wallet ?? `0x${'22'.repeat(20)}`,
        finality: chain?.finalityConfirmations ?? 2,
        issued_at: nowS,
      };
      // A receipt shaped like the real one (its payload decodes to the claims) whose signature is
      // zeros under kid "test": it never verifies against the JWKS, so it cannot be honoured.
      const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const receipt = `${b64({ alg: 'EdDSA', typ: 'JWT', kid: 'test' })}.${b64(claims)}.${Buffer.alloc(64).toString('base64url')}`;
      return { orderId, payload: { status: 'paid', receipt, ...claims, paid_at: iso, ...marker } };
    }
    default: {
      const never: never = event;
      throw new Error(`no sample for ${never as string}`);
    }
  }
}
