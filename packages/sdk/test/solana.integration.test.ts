// TollgateClient creates Solana orders (docs/solana.md): a SOL_DIRECT order on the local SVM,
// paid through its Solana Pay URL, followed to INVOICED by waitForOrder. Real HTTP, a real
// database (PGlite, and Postgres when TEST_DATABASE_URL is set), the local SVM's JSON-RPC server.
// The regression: createOrder threw "accepts[0].network is not eip155:<id>" after the gateway had
// created the order, and the merchant's retry with the same dappOrderId was then a 409.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { payWithReference, rpcClient, startLocalSvm, type LocalSvm } from '@tollgate/svm';
import { solanaChainFromFile } from '../../../apps/server/src/config/solana.ts';
import { backends } from '../../../apps/server/test/helpers/db.ts';
import { startTestServer, type Creds, type TestServer } from '../../../apps/server/test/helpers/server.ts';
import { TollgateApiError, TollgateClient } from '../src/index.ts';

const CHAIN_ID = 792703800;

for (const backend of backends()) {
  describe(`TollgateClient: Solana orders on the local SVM (${backend})`, () => {
    let svm: LocalSvm;
    let s: TestServer;
    let m: Creds;
    let wallet: string;
    let client: TollgateClient;
    before(async () => {
      svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 4 });
      const chain = solanaChainFromFile(
        {
          kind: 'solana',
          chain_id: CHAIN_ID,
          rpc_url: svm.rpcUrl,
          genesis_hash: svm.genesisHash,
          poll_interval_ms: 50,
          tokens: svm.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, program: t.symbol === 'USDT' ? 'token-2022' : 'spl-token' })),
        },
        0,
      );
      s = await startTestServer({ backend, config: { solanaChains: [chain] } });
      m = await s.createMerchant({ name: 'Solana SDK Shop', topUp: '10.00' });
      wallet = (await generateKeyPairSigner()).address;
      const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: CHAIN_ID, token_symbol: 'USDC', address: wallet });
      assert.equal(r.status, 201, r.text);
      client = new TollgateClient({ baseUrl: s.url, apiKey: m.apiKey, apiSecret: m.apiSecret });
    });
    after(async () => {
      await s?.close();
      await svm?.stop();
    });

    it('createOrder returns a SOL_DIRECT order with its Solana Pay URL; paying that URL makes it INVOICED', async () => {
      const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
      const dappOrderId = `sdk-sol-${Date.now()}`;
      const order = await client.createOrder({ dappOrderId, chainId: CHAIN_ID, tokenSymbol: 'USDC', fromAddress: svm.payers[0]!.address, amountWei: 1_250_000n });
      assert.equal(order.flow, 'SOL_DIRECT');
      assert.equal(order.network, svm.caip2);
      assert.deepEqual([order.fromChainId, order.payToChainId], [CHAIN_ID, CHAIN_ID]);
      assert.deepEqual([order.tokenContract, order.payToAddress, order.amountWei, order.decimals], [usdc.mint, wallet, '1250000', 6]);
      assert.ok(order.paymentUrl, 'the Solana Pay URL');
      const url = new URL(order.paymentUrl);
      assert.equal(url.protocol, 'solana:');
      assert.deepEqual([url.pathname, url.searchParams.get('amount'), url.searchParams.get('spl-token')], [wallet, '1.25', usdc.mint]);
      // The order exists once: a second create with the same dappOrderId is the documented 409.
      await assert.rejects(
        client.createOrder({ dappOrderId, chainId: CHAIN_ID, tokenSymbol: 'USDC', fromAddress: svm.payers[0]!.address, amountWei: 1_250_000n }),
        (e: unknown) => e instanceof TollgateApiError && e.status === 409 && e.code === 'order_already_exists',
      );

      await payWithReference(rpcClient(svm.rpcUrl), {
        payer: svm.payers[0]!,
        recipient: url.pathname as Address,
        mint: usdc.mint,
        tokenProgram: usdc.program,
        decimals: usdc.decimals,
        amount: 1_250_000n,
        references: url.searchParams.getAll('reference') as Address[],
        createRecipientAccount: true,
      });
      // Slots move only when the test says (slotMs 0): confirmed one slot on, final four slots after that.
      svm.ledger.advance(1);
      const seen: string[] = [];
      const final = await client.waitForOrder(order.orderId, {
        timeoutMs: 20_000,
        intervalMs: 50,
        onStatusChange: (o) => {
          seen.push(o.status);
          if (o.status === 'PAYMENT_CONFIRMED') svm.ledger.advance(4);
        },
      });
      assert.ok(seen.includes('PAYMENT_CONFIRMED'), seen.join());
      assert.equal(final.status, 'INVOICED');
      assert.equal(final.dapp_order_id, dappOrderId);
    });
  });
}
