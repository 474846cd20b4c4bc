import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, transferToken, type DevChain } from '@tollgate/devchain';
import { createPublicClient, decodeEventLog, http, keccak256, parseAbiItem, stringToBytes, type Hex } from 'viem';
import { findLedgerImbalances, getFeeBalance } from '../../src/fees/ledger.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, MERCHANT_WALLET, setupMerchant } from '../helpers/orders.ts';
import { startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import { chainConfigOf, startTestChain } from './watcher-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

function waitForStatus(s: TestServer, m: Creds, orderId: string, want: string, timeoutMs = 20_000) {
  return waitFor(
    `order ${orderId} ${want}`,
    async () => (await s.signed(m, 'GET', `/api/v1/orders/${orderId}`)).body,
    (last: any) => last.status === want,
    { timeoutMs },
  );
}

/**
 * End to end on a real anvil chain through the HTTP API and the running watcher: create → 402 →
 * payer transfer → PAYMENT_CONFIRMED → INVOICED → proof matches the on-chain log.
 */
for (const backend of backends()) {
  describe(`orders end to end on anvil (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    let m: Creds;
    before(async () => {
      dev = await startTestChain();
      s = await startTestServer({ backend, chains: [chainConfigOf(dev, { confirmations: 2, finalityConfirmations: 4, pollIntervalMs: 50 })] });
      m = await setupMerchant(s);
    });
    after(async () => {
      await s?.close();
      await dev?.stop();
    });

    it('confirms, invoices and proves a payment', async () => {
      const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
      const payer = dev.payers[0]!;
      const created = await s.signed(m, 'POST', '/api/v1/orders', {
        body: buildOrderBody({ chain_id: dev.chainId, from_address: payer.address, amount_wei: '2500000' }),
      });
      assert.equal(created.status, 402, created.text);
      const orderId = created.body.order_id as string;
      assert.equal(created.body.accepts[0].payTo, MERCHANT_WALLET);

      const hash = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc.address, to: MERCHANT_WALLET as Hex, amount: 2_500_000n });
      await mine(dev.rpcUrl, 1); // depth 2 = confirmations
      const confirmed = await waitForStatus(s, m, orderId, 'PAYMENT_CONFIRMED');
      assert.equal(confirmed.tx_hash, hash);
      assert.ok(confirmed.confirmed_at);

      const proofEarly = await s.signed(m, 'GET', `/api/v1/orders/${orderId}/proof`);
      assert.equal(proofEarly.status, 200, 'proof is available once the payment is confirmed');

      await mine(dev.rpcUrl, 2); // depth 4 = finality
      const invoiced = await waitForStatus(s, m, orderId, 'INVOICED');
      assert.ok(invoiced.invoiced_at);

      const proof = (await s.signed(m, 'GET', `/api/v1/orders/${orderId}/proof`)).body;
      const p = proof.payload;
      assert.equal(p.order_id, orderId);
      assert.equal(p.status, 'INVOICED');
      const expected = keccak256(stringToBytes(`${p.order_id}${p.tx_hash}${p.log_index}${p.from_addr}${p.to_addr}${p.amount_wei}${p.from_chain_id}`));
      assert.equal(proof.signature, expected);

      // The transaction the proof names, verified on chain independently of Tollgate.
      const client = createPublicClient({ transport: http(dev.rpcUrl) });
      const receipt = await client.getTransactionReceipt({ hash: p.tx_hash });
      const log = receipt.logs.find((l) => l.logIndex === p.log_index)!;
      assert.equal(log.address.toLowerCase(), p.token_contract);
      assert.equal(Number(receipt.blockNumber), p.block_number);
      const ev = decodeEventLog({ abi: [TRANSFER], data: log.data, topics: log.topics });
      assert.equal(ev.args.from.toLowerCase(), p.from_addr);
      assert.equal(ev.args.to.toLowerCase(), p.to_addr);
      assert.equal(ev.args.value.toString(), p.amount_wei);
      assert.equal(p.from_chain_id, dev.chainId);

      // Fee captured exactly once, books balanced, exactly one move into INVOICED.
      const fee = (await getFeeBalance(s.db, m.merchantId))!;
      assert.equal(fee.captured, 10_000n);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
      const moves = await s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM order_transitions WHERE order_id = $1 AND to_status = 'INVOICED'`, [orderId]);
      assert.equal(moves.rows[0]!.n, 1);
    });

    it('jumps CHECKOUT_VERIFIED → INVOICED when finality is reached in one pass', async () => {
      const usdt = dev.tokens.find((t) => t.symbol === 'USDT')!;
      const payer = dev.payers[1]!;
      const created = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: dev.chainId, token_symbol: 'USDT', from_address: payer.address, amount_wei: '990000' }) });
      assert.equal(created.status, 402, created.text);
      const orderId = created.body.order_id as string;
      // The transfer is mined at depth 1 (< confirmations 2); one anvil_mine call then adds 5 blocks
      // atomically, so the watcher's next pass finds depth 6 ≥ finality 4 and no depth in between.
      await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdt.address, to: MERCHANT_WALLET as Hex, amount: 990_000n });
      await mine(dev.rpcUrl, 5);
      const invoiced = await waitForStatus(s, m, orderId, 'INVOICED');
      assert.ok(invoiced.invoiced_at);
      const path = await s.db.query<{ from_status: string | null; to_status: string }>('SELECT from_status, to_status FROM order_transitions WHERE order_id = $1 ORDER BY id', [orderId]);
      assert.deepEqual(path.rows, [
        { from_status: null, to_status: 'CHECKOUT_VERIFIED' },
        { from_status: 'CHECKOUT_VERIFIED', to_status: 'INVOICED' },
      ]);
    });

    it('records an under-payment against the order and never confirms it', async () => {
      const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
      const payer = dev.payers[2]!;
      const created = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: dev.chainId, from_address: payer.address, amount_wei: '5000000' }) });
      const orderId = created.body.order_id as string;
      const hash = await transferToken({ rpcUrl: dev.rpcUrl, chainId: dev.chainId, privateKey: payer.privateKey, token: usdc.address, to: MERCHANT_WALLET as Hex, amount: 4_999_999n });
      await mine(dev.rpcUrl, 5);
      const deadline = Date.now() + 10_000;
      let rec: any;
      while (Date.now() < deadline) {
        rec = (await s.signed(m, 'GET', `/api/v1/orders/${orderId}`)).body;
        if (rec.observed_transfers?.length) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(rec.status, 'CHECKOUT_VERIFIED');
      assert.equal(rec.tx_hash, undefined);
      assert.deepEqual(
        rec.observed_transfers.map((t: any) => [t.tx_hash, t.kind, t.amount_wei]),
        [[hash, 'underpaid', '4999999']],
      );
    });
  });
}
