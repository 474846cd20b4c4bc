// TollgateClient against a running Tollgate: real HTTP, real database (PGlite, and Postgres when
// TEST_DATABASE_URL is set), a fake chain config (no RPC needed by these routes).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { keccak256, stringToBytes } from 'viem';
import { backends } from '../../../apps/server/test/helpers/db.ts';
import { MERCHANT_WALLET, PAYER, setupMerchant } from '../../../apps/server/test/helpers/orders.ts';
import { fakeChain, startTestServer, type Creds, type TestServer } from '../../../apps/server/test/helpers/server.ts';
import { TollgateApiError, TollgateClient, TollgateUnknownOutcomeError, type CreateOrderParams } from '../src/index.ts';

const CHAIN = fakeChain();
const USDC = CHAIN.tokens[0]!.address;

let seq = 0;
function orderParams(overrides: Partial<CreateOrderParams> = {}): CreateOrderParams {
  seq++;
  // Distinct amounts: two live orders may not share payer, pay-to address, token and amount.
  return { dappOrderId: `sdk-${Date.now()}-${seq}`, chainId: CHAIN.chainId, tokenSymbol: 'USDC', fromAddress: PAYER, amountWei: BigInt(2_000_000 + seq), ...overrides };
}

async function rejection(p: Promise<unknown>): Promise<TollgateApiError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof TollgateApiError, `expected TollgateApiError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

for (const backend of backends()) {
  describe(`TollgateClient against a running Tollgate (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let client: TollgateClient;

    before(async () => {
      s = await startTestServer({ backend, chains: [CHAIN] });
      m = await setupMerchant(s);
      client = new TollgateClient({ baseUrl: s.url, apiKey: m.apiKey, apiSecret: m.apiSecret });
    });
    after(() => s.close());

    it('createOrder returns the normalized terms, each field matching the 402 body', async () => {
      const p = orderParams({ tokenContract: USDC });
      const order = await client.createOrder(p);
      const x = order.x402;
      const a = x.accepts[0]!;
      assert.match(order.orderId, /^ord_/);
      assert.equal(order.orderId, x.order_id);
      assert.equal(order.flow, 'ERC20_DIRECT');
      assert.equal(order.flow, x.flow);
      assert.equal(order.tokenSymbol, 'USDC');
      assert.equal(order.tokenSymbol, x.token_symbol);
      assert.equal(order.tokenContract, a.asset);
      assert.equal(order.tokenContract, USDC);
      assert.equal(order.payToAddress, a.payTo);
      assert.equal(order.payToAddress, MERCHANT_WALLET);
      assert.equal(a.network, `eip155:${order.fromChainId}`);
      assert.equal(order.fromChainId, CHAIN.chainId);
      assert.equal(x.extensions.paymentTerms.destinationChain, `eip155:${order.payToChainId}`);
      assert.equal(order.amountWei, a.amount);
      assert.equal(order.amountWei, p.amountWei.toString());
      assert.equal(order.decimals, 6);
      assert.equal(order.expiresAt, x.extensions.paymentTerms.expiresAt);
      assert.equal(order.expiresAt, Math.floor(s.clock.now() / 1000) + 600);
      assert.equal(order.calldataSignRequest, undefined);
      assert.equal('calldataSignRequest' in order, false, 'absent, not undefined');
      assert.equal(x.x402Version, 2);
    });

    it('getOrderStatus returns the order status record', async () => {
      const p = orderParams();
      const order = await client.createOrder(p);
      const rec = await client.getOrderStatus(order.orderId);
      assert.equal(rec.order_id, order.orderId);
      assert.equal(rec.status, 'CHECKOUT_VERIFIED');
      assert.equal(rec.dapp_order_id, p.dappOrderId);
      assert.equal(rec.merchant_id, m.merchantId);
      assert.equal(rec.amount_wei, order.amountWei);
      assert.equal(rec.pay_to_address, order.payToAddress);
      assert.equal(rec.chain_id, CHAIN.chainId);
      assert.equal(rec.expires_at, order.expiresAt);
    });

    it('getOrderProof: 404 proof_not_available before payment, the payment record after', async () => {
      const order = await client.createOrder(orderParams());
      const err = await rejection(client.getOrderProof(order.orderId));
      assert.equal(err.status, 404);
      assert.equal(err.code, 'proof_not_available');
      assert.match(err.requestId!, /^req_/);
      assert.match(err.shortMessage, /CHECKOUT_VERIFIED/);

      const tx = `0x${'ab'.repeat(32)}`;
      await s.db.query(
        `UPDATE orders SET status = 'INVOICED', tx_hash = $2, log_index = 3, block_number = 77, paid_amount_wei = amount_wei,
           confirmations = 2, confirmed_at = now(), invoiced_at = now() WHERE id = $1`,
        [order.orderId, tx],
      );
      const proof = await client.getOrderProof(order.orderId);
      const pl = proof.payload;
      assert.deepEqual(
        { order_id: pl.order_id, tx_hash: pl.tx_hash, log_index: pl.log_index, block_number: pl.block_number, amount_wei: pl.amount_wei, status: pl.status },
        { order_id: order.orderId, tx_hash: tx, log_index: 3, block_number: 77, amount_wei: order.amountWei, status: 'INVOICED' },
      );
      const concat = `${pl.order_id}${pl.tx_hash}${pl.log_index}${pl.from_addr}${pl.to_addr}${pl.amount_wei}${pl.from_chain_id}`;
      assert.equal(proof.signature, keccak256(stringToBytes(concat)));
    });

    it('cancelOrder cancels a CHECKOUT_VERIFIED order; a second cancel is 400 order_not_cancellable', async () => {
      const order = await client.createOrder(orderParams());
      const rec = await client.cancelOrder(order.orderId);
      assert.equal(rec.status, 'CANCELLED');
      assert.equal(rec.order_id, order.orderId);
      const err = await rejection(client.cancelOrder(order.orderId));
      assert.equal(err.status, 400);
      assert.equal(err.code, 'order_not_cancellable');
      assert.match(err.message, /CANCELLED/);
      assert.ok(!(err instanceof TollgateUnknownOutcomeError));
    });

    it('acceptPayment: 409 no_payment_to_accept with nothing recorded; a final recorded late payment invoices the order', async () => {
      const order = await client.createOrder(orderParams());
      const none = await rejection(client.acceptPayment(order.orderId));
      assert.equal(none.status, 409);
      assert.equal(none.code, 'no_payment_to_accept');
      await client.cancelOrder(order.orderId);
      // A late payment as the watcher records it (this server's chain has no node): the transfer
      // row against the order, and a cursor well past finality.
      const txHash = `0x${'5a'.repeat(32)}`;
      await s.db.query(
        `INSERT INTO chain_cursors (chain_id, block_number, block_hash) VALUES ($1, 100, $2)
         ON CONFLICT (chain_id) DO UPDATE SET block_number = 100`,
        [CHAIN.chainId, `0x${'c0'.repeat(32)}`],
      );
      await s.db.query(
        `INSERT INTO chain_transfers (chain_id, token_contract, tx_hash, log_index, block_number, block_hash, from_address, to_address, amount_wei, match_status, order_id)
         VALUES ($1, $2, $3, 0, 10, $4, $5, $6, $7, 'late', $8)`,
        [CHAIN.chainId, USDC, txHash, `0x${'b1'.repeat(32)}`, PAYER, MERCHANT_WALLET, order.amountWei, order.orderId],
      );
      // The watcher claims what it records against an order, in the same transaction (claims ledger).
      await s.db.query(`INSERT INTO transfer_claims (chain_id, tx_ref, log_index, purpose, purpose_id, amount_wei, payer) VALUES ($1, $2, 0, 'order', $3, $4, $5)`, [CHAIN.chainId, txHash, order.orderId, order.amountWei, PAYER]);
      const rec = await client.acceptPayment(order.orderId, { txHash, logIndex: 0 });
      assert.equal(rec.status, 'INVOICED');
      assert.equal(rec.tx_hash, txHash);
      assert.equal(rec.observed_transfers?.[0]?.accepted, true);
      const again = await client.acceptPayment(order.orderId);
      assert.equal(again.status, 'INVOICED', 'repeating is safe');
    });

    it('getMerchant(): the signed merchant with its fee balance; getMerchant(id): the public configuration', async () => {
      const me = await client.getMerchant();
      assert.equal(me.merchant_id, m.merchantId);
      assert.match(me.fee_balance.available, /^[0-9]+\.[0-9]{2}$/);
      assert.equal(me.wallets.length, CHAIN.tokens.length);
      const pub = await client.getMerchant(m.merchantId);
      assert.equal(pub.merchant_id, m.merchantId);
      assert.equal('fee_balance' in pub, false);
      assert.deepEqual(pub.wallets.map((w) => [w.chain_id, w.token_symbol, w.token_contract, w.address]).sort(), CHAIN.tokens.map((t) => [CHAIN.chainId, t.symbol, t.address, MERCHANT_WALLET]).sort());
      const err = await rejection(client.getMerchant('mch_does_not_exist'));
      assert.equal(err.status, 404);
      assert.equal(err.code, 'merchant_not_found');
    });

    it('401 invalid_signature with a wrong secret, on reads and writes alike', async () => {
      const bad = new TollgateClient({ baseUrl: s.url, apiKey: m.apiKey, apiSecret: `${m.apiSecret}x` });
      // Calls start one at a time: an eagerly created second promise could reject before it is
      // awaited (an unhandled rejection that fails the run whatever the assertions say).
      for (const call of [() => bad.getMerchant(), () => bad.createOrder(orderParams())]) {
        const err = await rejection(call());
        assert.equal(err.status, 401);
        assert.equal(err.code, 'invalid_signature');
      }
      const unknownKey = new TollgateClient({ baseUrl: s.url, apiKey: 'key_unknown', apiSecret: 'whatever' });
      assert.equal((await rejection(unknownKey.getMerchant())).code, 'api_key_invalid');
    });

    it('404 order_not_found for an order that does not exist', async () => {
      const err = await rejection(client.getOrderStatus('ord_doesNotExist1234567'));
      assert.equal(err.status, 404);
      assert.equal(err.code, 'order_not_found');
      assert.equal(err.param, 'order_id');
    });

    it('409 order_already_exists for a duplicate dapp_order_id: a typed API error, not an unknown outcome', async () => {
      const p = orderParams();
      await client.createOrder(p);
      const err = await rejection(client.createOrder({ ...p, amountWei: 999n }));
      assert.equal(err.status, 409);
      assert.equal(err.code, 'order_already_exists');
      assert.ok(!(err instanceof TollgateUnknownOutcomeError));
    });

    it('400 insufficient_fee_balance for a merchant without fee balance', async () => {
      const poor = await setupMerchant(s, { topUp: '0', name: 'Poor Merchant' });
      const c = new TollgateClient({ baseUrl: s.url, apiKey: poor.apiKey, apiSecret: poor.apiSecret });
      const err = await rejection(c.createOrder(orderParams()));
      assert.equal(err.status, 400);
      assert.equal(err.code, 'insufficient_fee_balance');
    });

    it('400 validation errors name the parameter (wire name)', async () => {
      const err = await rejection(client.createOrder(orderParams({ tokenSymbol: 'DAI' })));
      assert.equal(err.code, 'token_not_supported');
      assert.equal(err.param, 'token_symbol');
    });

    it('ten concurrent signed reads never trip the replay check (a fresh nonce each)', async () => {
      const order = await client.createOrder(orderParams());
      const results = await Promise.all(Array.from({ length: 10 }, () => client.getOrderStatus(order.orderId)));
      assert.ok(results.every((r) => r.order_id === order.orderId));
    });
  });
}
