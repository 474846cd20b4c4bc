// Hosted checkout sessions on a Solana cluster (local SVM): the session offers the merchant's
// Solana wallets, bind takes a base58 payer (an EVM address is refused on a Solana option), and the
// bind terms and the public view carry the order's solana: transfer request with its reference key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { startLocalSvm, type LocalSvm } from '@tollgate/svm';
import { referenceOf } from '../../src/chain/solana/reference.ts';
import { solanaChainFromFile } from '../../src/config/solana.ts';
import { backends } from '../helpers/db.ts';
import { startTestServer, type Creds, type TestServer } from '../helpers/server.ts';

const CHAIN_ID = 792703800;

for (const backend of backends()) {
  describe(`checkout sessions on Solana (${backend})`, () => {
    let svm: LocalSvm;
    let s: TestServer;
    let m: Creds;
    let wallet: string;
    before(async () => {
      svm = await startLocalSvm({ slotMs: 0 });
      const chain = solanaChainFromFile(
        { kind: 'solana', chain_id: CHAIN_ID, rpc_url: svm.rpcUrl, genesis_hash: svm.genesisHash, poll_interval_ms: 200, tokens: svm.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, program: t.symbol === 'USDT' ? 'token-2022' : 'spl-token' })) },
        0,
      );
      s = await startTestServer({ backend, config: { solanaChains: [chain] } });
      m = await s.createMerchant({ name: 'Solana Shop', topUp: '10.00' });
      wallet = (await generateKeyPairSigner()).address;
      const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: CHAIN_ID, token_symbol: 'USDC', address: wallet });
      assert.equal(r.status, 201, r.text);
    });
    after(async () => {
      await s?.close();
      await svm?.stop();
    });

    it('offers USDC on Solana; binds a base58 payer; terms and public view carry the solana: URL', async () => {
      const c = await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: { checkout_type: 'DIRECT', price: '2.50' } });
      assert.equal(c.status, 200, c.text);
      const id = c.body.checkout_id as string;
      const view = (await s.request('GET', `/checkout/v1/sessions/${id}`)).body;
      const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
      assert.deepEqual(view.payment_options.map((o: any) => [o.chain_id, o.token_symbol, o.token_contract, o.amount_wei]), [[CHAIN_ID, 'USDC', usdc.mint, '2500000']]);

      const evm = await s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: CHAIN_ID, token_symbol: 'USDC', from_address: '0x' + 'ab'.repeat(20) } });
      assert.equal(evm.status, 400, evm.text);
      assert.equal(evm.body.code, 'invalid_request', evm.text);
      assert.equal(evm.body.param, 'from_address', evm.text);

      const payer = svm.payers[0]!.address;
      const b = await s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: CHAIN_ID, token_symbol: 'USDC', from_address: payer } });
      assert.equal(b.status, 200, b.text);
      assert.equal(b.body.pay_to_address, wallet);
      const url = new URL(b.body.payment_url);
      assert.equal(url.protocol, 'solana:');
      assert.equal(url.pathname, wallet);
      assert.equal(url.searchParams.get('amount'), '2.5');
      assert.equal(url.searchParams.get('spl-token'), usdc.mint);
      assert.deepEqual(url.searchParams.getAll('reference'), [referenceOf(b.body.order_id)]);

      // The same payer again: the same order and URL (base58 compared as given, not lowercased).
      const again = await s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: CHAIN_ID, token_symbol: 'USDC', from_address: payer } });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.body.order_id, b.body.order_id);
      assert.equal(again.body.payment_url, b.body.payment_url);
      const other = await s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: CHAIN_ID, token_symbol: 'USDC', from_address: svm.payers[1]!.address } });
      assert.equal(other.status, 409, other.text);

      const bound = (await s.request('GET', `/checkout/v1/sessions/${id}`)).body;
      assert.equal(bound.order.payment_url, b.body.payment_url);
    });
  });
}
