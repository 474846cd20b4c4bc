// Hosted checkout sessions on a Solana cluster (local SVM): the session offers the merchant's
// Solana wallets, bind takes a base58 payer (an EVM address is refused on a Solana option), and the
// bind terms and the public view carry the order's solana: transfer request with its reference key.
// The Solana Pay transaction request of a session (GET label/icon, POST {account} → unsigned
// transaction): decoded and checked instruction by instruction, signed by the payer's key, sent
// through the real RPC client; the watcher takes the order to INVOICED. Refusals change nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decompileTransactionMessage, generateKeyPairSigner, getBase64EncodedWireTransaction, getBase64Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder, signTransaction, type Address, type Instruction } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { ASSOCIATED_TOKEN_PROGRAM, rpcClient, startLocalSvm, waitForSignature, type LocalSvm } from '@tollgate/svm';
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
      svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 6 });
      const chain = solanaChainFromFile(
        {
          kind: 'solana',
          chain_id: CHAIN_ID,
          rpc_url: svm.rpcUrl,
          genesis_hash: svm.genesisHash,
          poll_interval_ms: 200,
          tokens: svm.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, program: t.symbol === 'USDT' ? 'token-2022' : 'spl-token' })),
        },
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
      assert.deepEqual(
        view.payment_options.map((o: any) => [o.chain_id, o.token_symbol, o.token_contract, o.amount_wei]),
        [[CHAIN_ID, 'USDC', usdc.mint, '2500000']],
      );

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

    it('orders never clash on terms on Solana (reference keys tell them apart): a returning payer binds a new session, both orders stay live; the API creates twice', async () => {
      const payer = (await generateKeyPairSigner()).address;
      const session = async () => (await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: { checkout_type: 'DIRECT', price: '3.75' } })).body.checkout_id as string;
      const bind = async (id: string) => s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: CHAIN_ID, token_symbol: 'USDC', from_address: payer } });
      const first = await bind(await session());
      const second = await bind(await session());
      assert.equal(first.status, 200, first.text);
      assert.equal(second.status, 200, second.text);
      assert.notEqual(new URL(second.body.payment_url).searchParams.get('reference'), new URL(first.body.payment_url).searchParams.get('reference'));
      for (const o of [first.body.order_id, second.body.order_id]) {
        assert.equal((await s.signed(m, 'GET', `/api/v1/orders/${o}`)).body.status, 'CHECKOUT_VERIFIED', 'nothing superseded: nothing to tell apart');
      }
      const api = (n: number) => s.signed(m, 'POST', '/api/v1/orders', { body: { dapp_order_id: `sol-same-terms-${n}`, chain_id: CHAIN_ID, token_symbol: 'USDC', from_address: payer, amount_wei: '3750000' } });
      const [a, b] = [await api(1), await api(2)];
      assert.deepEqual([a.status, b.status], [402, 402], `${a.text}\n${b.text}`);
    });

    it('Solana Pay transaction request: label; the unsigned transfer of the bound order, signed and sent by the payer, reaches INVOICED', async () => {
      const c = await s.signed(m, 'POST', '/api/v1/checkout/sessions', { body: { checkout_type: 'DIRECT', price: '1.25' } });
      assert.equal(c.status, 200, c.text);
      const id = c.body.checkout_id as string;
      const path = `/checkout/v1/sessions/${id}/solana-pay`;
      const label = await s.request('GET', path);
      assert.equal(label.status, 200, label.text);
      assert.equal(label.body.label, 'Solana Shop');
      assert.match(label.body.icon, /^http.*\/checkout\/assets\/favicon\.svg$/);
      assert.equal((await s.request('GET', `/checkout/v1/sessions/cs_${'1'.repeat(22)}/solana-pay`)).status, 404);
      const view = (await s.request('GET', `/checkout/v1/sessions/${id}`)).body;
      assert.equal(view.payment_options[0].wallet_chain, 'solana:localnet', 'the page asks wallets for this chain');

      const payer = svm.payers[2]!;
      // Not bound yet: no transaction (the order and its reference key do not exist).
      const early = await s.request('POST', path, { body: { account: payer.address } });
      assert.equal(early.status, 400, early.text);
      assert.equal(early.body.code, 'invalid_request');
      const b = await s.request('POST', `/checkout/v1/sessions/${id}/bind`, { body: { chain_id: CHAIN_ID, token_symbol: 'USDC', from_address: payer.address } });
      assert.equal(b.status, 200, b.text);
      const bad = await s.request('POST', path, { body: { account: '0x' + 'ab'.repeat(20) } });
      assert.equal(bad.status, 400, bad.text);
      assert.equal(bad.body.param, 'account');
      const other = await s.request('POST', path, { body: { account: svm.payers[1]!.address } });
      assert.equal(other.status, 409, other.text);
      assert.equal(other.body.code, 'session_already_bound');

      const r = await s.request('POST', path, { body: { account: payer.address } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.message, 'Payment to Solana Shop');
      const tx = getTransactionDecoder().decode(getBase64Encoder().encode(r.body.transaction));
      assert.deepEqual(Object.keys(tx.signatures), [payer.address], 'the payer is the only signer (fee payer)');
      assert.equal(tx.signatures[payer.address as Address], null, 'unsigned');
      const msg = decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(tx.messageBytes));
      const ixs = msg.instructions as readonly Instruction[];
      assert.equal(msg.feePayer.address, payer.address);
      const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
      const [src] = await findAssociatedTokenPda({ owner: payer.address, mint: usdc.mint, tokenProgram: usdc.program });
      const [dst] = await findAssociatedTokenPda({ owner: wallet as Address, mint: usdc.mint, tokenProgram: usdc.program });
      // The merchant wallet has no USDC account yet: created (idempotent) first, then the transfer.
      assert.deepEqual(
        ixs.map((ix) => ix.programAddress),
        [ASSOCIATED_TOKEN_PROGRAM, usdc.program],
      );
      const transfer = ixs[1]!;
      assert.deepEqual(
        transfer.accounts!.map((a) => a.address),
        [src, usdc.mint, dst, payer.address, referenceOf(b.body.order_id)],
      );
      const data = transfer.data!;
      assert.equal(data[0], 12, 'transferChecked');
      assert.equal(Buffer.from(data.subarray(1, 9)).readBigUInt64LE(), 1_250_000n);
      assert.equal(data[9], usdc.decimals);

      const signed = await signTransaction([payer.keyPair], tx);
      const rpc = rpcClient(svm.rpcUrl);
      const sig = await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
      await waitForSignature(rpc, sig, 'processed');
      svm.ledger.advance(1);
      const deadline = Date.now() + 20_000;
      let order: any;
      for (;;) {
        order = (await s.signed(m, 'GET', `/api/v1/orders/${b.body.order_id}`)).body;
        if (order.status === 'INVOICED') break;
        if (Date.now() > deadline) throw new Error(`not INVOICED: ${JSON.stringify(order)}`);
        svm.ledger.advance(1);
        await new Promise((res) => setTimeout(res, 50));
      }
      assert.equal(order.tx_hash, sig);
      assert.equal(order.flow, 'SOL_DIRECT');
      // Paid: no second transaction is built.
      const again = await s.request('POST', path, { body: { account: payer.address } });
      assert.equal(again.status, 410, again.text);
    });
  });
}
