// The gasless EIP-3009 payment of DELEGATE mode on a real anvil chain: the payer signs a
// transferWithAuthorization to the settlement contract (through the SDK helper), the merchant
// submits it (POST /api/v1/orders/{id}/authorization, through the SDK client), the gateway relays
// it with its executor key; the order is then settled like a plain transfer and the payer's ETH
// balance never moves. Refusals: expired window, wrong amount, wrong signer, wrong recipient,
// replayed nonce, an ERC20_APPROVE_XFER order, a paid order; nothing is recorded or sent for them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine } from '@tollgate/devchain';
import { createPublicClient, erc20Abi, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { signEip3009Authorization, TollgateApiError, TollgateClient, type CreatedOrder } from '../../../../packages/sdk/src/index.ts';
import { backends } from '../helpers/db.ts';
import { sample } from '../helpers/metrics.ts';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import type { Creds } from '../helpers/server.ts';
import { setupDelegateMerchant, startDelegateStack, type DelegateStack } from './delegate-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

const USDC_DOMAIN = { name: 'USD Coin', version: '2' };

for (const backend of backends()) {
  describe(`DELEGATE gasless EIP-3009 payment (${backend})`, () => {
    let st: DelegateStack;
    let m: Creds;
    let sdk: TollgateClient;
    let seq = 0;
    before(async () => {
      st = await startDelegateStack(backend);
      m = await setupDelegateMerchant(st, { callback: false });
      sdk = new TollgateClient({ baseUrl: st.s.url, apiKey: m.apiKey, apiSecret: m.apiSecret });
    });
    after(async () => {
      await st?.close();
    });

    const client = () => createPublicClient({ transport: http(st.dev.rpcUrl) });
    const token = (symbol: string) => st.dev.tokens.find((t) => t.symbol === symbol)!.address as Hex;
    const balance = (symbol: string, who: Hex) => client().readContract({ address: token(symbol), abi: erc20Abi, functionName: 'balanceOf', args: [who] });
    const payerN = (i: number) => st.dev.payers[i]!;
    const account = (i: number) => privateKeyToAccount(payerN(i).privateKey);
    const relayRows = async (orderId: string) => Number((await st.s.db.query<{ n: string }>(`SELECT count(*) AS n FROM settlements WHERE order_id = $1 AND kind = 'relay'`, [orderId])).rows[0]!.n);

    async function create(symbol: string, payer: Hex): Promise<CreatedOrder> {
      return sdk.createOrder({ dappOrderId: `gasless-${++seq}-${Date.now()}`, chainId: st.chain.chainId, tokenSymbol: symbol, fromAddress: payer, amountWei: String(2_000_000 + seq) });
    }
    function until(orderId: string, want: string, timeoutMs = 30_000) {
      return waitFor(
        `order ${orderId} ${want}`,
        async () => {
          const last = (await st.s.signed(m, 'GET', `/api/v1/orders/${orderId}`)).body;
          if (last.status !== want) await mine(st.dev.rpcUrl, 1);
          return last;
        },
        (last) => last.status === want,
        { timeoutMs, everyMs: 100 },
      );
    }
    async function refused(orderId: string, body: unknown, status: number, code: string, param?: string) {
      const r = await st.s.signed(m, 'POST', `/api/v1/orders/${orderId}/authorization`, { body });
      assert.equal(r.status, status, r.text);
      assert.equal(r.body.code, code, r.text);
      if (param) assert.equal(r.body.param, param, r.text);
    }

    it('the payer signs, the gateway relays: INVOICED, merchant paid, payer ETH untouched; a repeat names the same transaction', async () => {
      const payer = payerN(0).address as Hex;
      const o = await create('USDC', payer);
      assert.equal(o.flow, 'ERC20_3009');
      const ethBefore = await client().getBalance({ address: payer });
      const usdcBefore = await balance('USDC', payer);
      const merchantBefore = await balance('USDC', MERCHANT_WALLET as Hex);

      const auth = await signEip3009Authorization(account(0), o, USDC_DOMAIN);
      const r = await sdk.submitAuthorization(o.orderId, auth);
      assert.equal(r.status, 'accepted');
      assert.match(r.tx_hash, /^0x[0-9a-f]{64}$/);
      const again = await sdk.submitAuthorization(o.orderId, auth);
      assert.equal(again.tx_hash, r.tx_hash, 'the same authorization again is an idempotent retry');
      // The relay is an executor transaction not final yet: the settlement backlog gauge counts it
      // (the test chain mines only when asked, so it cannot be final before the next block).
      const chain_id = String(st.chain.chainId);
      const scrape = async () => (await st.s.request('GET', '/metrics')).text;
      const busy = await scrape();
      assert.ok(sample(busy, 'tollgate_settlement_backlog', { chain_id })! >= 1, busy);
      assert.ok(sample(busy, 'tollgate_settlement_oldest_unfinished_age_seconds', { chain_id })! >= 0);
      assert.doesNotMatch(busy, /cs_/);

      const rec = await until(o.orderId, 'INVOICED');
      assert.equal(rec.tx_hash, r.tx_hash, 'the payment seen by the watcher is the relay transaction');
      const relay = await client().getTransactionReceipt({ hash: r.tx_hash as Hex });
      assert.equal(relay.status, 'success');
      assert.equal(relay.from.toLowerCase(), st.setup.signer.executorAddress.toLowerCase(), 'the executor key sent (and paid for) the relay');
      assert.equal(await client().getBalance({ address: payer }), ethBefore, "the payer's ETH balance did not move");
      assert.equal(await balance('USDC', payer), usdcBefore - BigInt(o.amountWei));
      assert.equal(await balance('USDC', MERCHANT_WALLET as Hex), merchantBefore + BigInt(o.amountWei));
      assert.equal(await relayRows(o.orderId), 1);
      const idle = await scrape();
      assert.equal(sample(idle, 'tollgate_settlement_backlog', { chain_id }), 0, 'relay and settlement final: no backlog');
      assert.equal(sample(idle, 'tollgate_settlement_oldest_unfinished_age_seconds', { chain_id }), 0);

      // The merchant's retry may arrive after the relay was mined and seen: still the same transaction.
      const retried = await sdk.submitAuthorization(o.orderId, auth);
      assert.equal(retried.tx_hash, r.tx_hash, 'a retry after the order was paid names the same transaction');
      assert.equal(await relayRows(o.orderId), 1);
      // Paid: another authorization for it is refused, and nothing is recorded.
      const late = await signEip3009Authorization(account(0), o, USDC_DOMAIN);
      await refused(o.orderId, late, 409, 'order_not_payable', 'order_id');
    });

    it('refusals: expired window, not yet valid, wrong amount, wrong recipient, wrong signer, bad signature — nothing recorded', async () => {
      const payer = payerN(1).address as Hex;
      const o = await create('USDC', payer);
      const now = BigInt(Math.floor(Date.now() / 1000));
      await refused(o.orderId, await signEip3009Authorization(account(1), o, USDC_DOMAIN, { validBefore: now - 10n }), 400, 'invalid_authorization', 'validBefore');
      await refused(o.orderId, await signEip3009Authorization(account(1), o, USDC_DOMAIN, { validAfter: now + 600n }), 400, 'invalid_authorization', 'validAfter');
      await refused(o.orderId, await signEip3009Authorization(account(1), { ...o, amountWei: String(BigInt(o.amountWei) - 1n) }, USDC_DOMAIN), 400, 'invalid_authorization', 'value');
      await refused(o.orderId, await signEip3009Authorization(account(1), { ...o, payToAddress: MERCHANT_WALLET }, USDC_DOMAIN), 400, 'invalid_authorization', 'to');
      // Someone else's key: `from` is theirs (refused as the wrong payer), or claims the payer (the signature does not recover to it).
      const stranger = privateKeyToAccount(generatePrivateKey());
      await refused(o.orderId, await signEip3009Authorization(stranger, o, USDC_DOMAIN), 400, 'invalid_authorization', 'from');
      const forged = await signEip3009Authorization(stranger, o, USDC_DOMAIN);
      await refused(o.orderId, { ...forged, from: payer }, 400, 'invalid_authorization', 'signature');
      // Signed for another token domain (a wrong version): does not recover either.
      await refused(o.orderId, await signEip3009Authorization(account(1), o, { name: 'USD Coin', version: '1' }), 400, 'invalid_authorization', 'signature');
      // Schema: a short nonce is a 400 invalid_request before any check.
      const good = await signEip3009Authorization(account(1), o, USDC_DOMAIN);
      await refused(o.orderId, { ...good, nonce: '0x12' }, 400, 'invalid_request');
      assert.equal(await relayRows(o.orderId), 0, 'no refusal recorded or sent anything');
      assert.equal((await st.s.signed(m, 'GET', `/api/v1/orders/${o.orderId}`)).body.status, 'CHECKOUT_VERIFIED');
    });

    it('a replayed nonce: the authorization used for one order is refused for another (simulated, not sent)', async () => {
      const payer = payerN(2).address as Hex;
      const first = await create('USDC', payer);
      const auth = await signEip3009Authorization(account(2), first, USDC_DOMAIN);
      await sdk.submitAuthorization(first.orderId, auth);
      await until(first.orderId, 'INVOICED');
      // Same payer, same amount, same settlement contract: only the nonce makes it a replay.
      const second = await sdk.createOrder({ dappOrderId: `gasless-replay-${Date.now()}`, chainId: st.chain.chainId, tokenSymbol: 'USDC', fromAddress: payer, amountWei: first.amountWei });
      const err = await sdk.submitAuthorization(second.orderId, auth).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof TollgateApiError, String(err));
      assert.equal(err.status, 409);
      assert.equal(err.code, 'authorization_used');
      assert.equal(await relayRows(second.orderId), 0);
      // A fresh authorization pays it.
      await sdk.submitAuthorization(second.orderId, await signEip3009Authorization(account(2), second, USDC_DOMAIN));
      await until(second.orderId, 'INVOICED');
    });

    it('an ERC20_APPROVE_XFER order takes no authorization; an unknown order is 404', async () => {
      const o = await create('USDT', payerN(3).address as Hex);
      assert.equal(o.flow, 'ERC20_APPROVE_XFER');
      const auth = await signEip3009Authorization(account(3), o, { name: 'Tether USD', version: '2' });
      await refused(o.orderId, auth, 400, 'invalid_request', 'order_id');
      await refused('ord_doesnotexist', auth, 404, 'order_not_found');
    });
  });
}
