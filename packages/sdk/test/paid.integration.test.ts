// The SDK against a running Tollgate whose watcher follows a real anvil chain: create an order,
// pay it on chain, waitForOrder until INVOICED (hearing each change), and check the proof.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, transferToken, type DevChain } from '@tollgate/devchain';
import { keccak256, stringToBytes, type Hex } from 'viem';
import { backends } from '../../../apps/server/test/helpers/db.ts';
import { MERCHANT_WALLET, setupMerchant } from '../../../apps/server/test/helpers/orders.ts';
import { startTestServer, type TestServer } from '../../../apps/server/test/helpers/server.ts';
import { chainConfigOf, startTestChain } from '../../../apps/server/test/integration/watcher-fixtures.ts';
import { TollgateClient } from '../src/index.ts';

for (const backend of backends()) {
  describe(`TollgateClient with a paid order on anvil (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    let client: TollgateClient;
    before(async () => {
      dev = await startTestChain();
      s = await startTestServer({ backend, chains: [chainConfigOf(dev, { confirmations: 2, finalityConfirmations: 3, pollIntervalMs: 50 })] });
      const m = await setupMerchant(s);
      client = new TollgateClient({ baseUrl: s.url, apiKey: m.apiKey, apiSecret: m.apiSecret });
    });
    after(async () => {
      await s?.close();
      await dev?.stop();
    });

    it('createOrder → pay on chain → waitForOrder resolves INVOICED → getOrderProof names the transfer', async () => {
      const payer = dev.payers[3]!;
      const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
      const order = await client.createOrder({ dappOrderId: `sdk-paid-${Date.now()}`, chainId: dev.chainId, tokenSymbol: 'USDC', fromAddress: payer.address, amountWei: 1_250_000n });
      assert.equal(order.payToAddress, MERCHANT_WALLET);
      assert.equal(order.tokenContract, usdc.address.toLowerCase());

      const seen: string[] = [];
      const waiting = client.waitForOrder(order.orderId, { intervalMs: 50, timeoutMs: 30_000, onStatusChange: (o) => void seen.push(o.status) });
      const hash = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc.address, to: order.payToAddress as Hex, amount: BigInt(order.amountWei) });
      // Mine one block at a time so the watcher can report the intermediate confirmation.
      for (let i = 0; i < 4; i++) {
        await new Promise((r) => setTimeout(r, 300));
        await mine(dev.rpcUrl, 1);
      }
      const final = await waiting;
      assert.equal(final.status, 'INVOICED');
      assert.equal(final.tx_hash, hash);
      assert.equal(seen[0], 'CHECKOUT_VERIFIED');
      assert.equal(seen[seen.length - 1], 'INVOICED');
      assert.ok(
        seen.every((st) => ['CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED', 'INVOICED'].includes(st)),
        seen.join(','),
      );

      const proof = await client.getOrderProof(order.orderId);
      const p = proof.payload;
      assert.equal(p.tx_hash, hash);
      assert.equal(p.amount_wei, '1250000');
      assert.equal(p.from_addr, payer.address.toLowerCase());
      assert.equal(proof.signature, keccak256(stringToBytes(`${p.order_id}${p.tx_hash}${p.log_index}${p.from_addr}${p.to_addr}${p.amount_wei}${p.from_chain_id}`)));
    });
  });
}
