// Chain faults: real payments on anvil while a loopback JSON-RPC proxy (@tollgate/devchain rpc-proxy.ts)
// between Tollgate's watcher and anvil drops connections, delays, answers JSON-RPC errors or HTTP
// 500, or serves a lagging head; an RPC outage with transfers sent during it; and reorgs below and at
// the confirmation depth (@tollgate/devchain `reorg`). Invariants, checked continuously by a monitor
// that reads the orders table and asks anvil directly (never through the proxy):
//   - no false confirmation: a PAYMENT_CONFIRMED / INVOICED order has its transfer in a canonical
//     block at depth ≥ confirmations / finality (during a reorg at the confirmation depth a
//     PAYMENT_CONFIRMED order may briefly point at an orphaned block: documented, README "Reorgs";
//     never an INVOICED one);
//   - no missed payment: every paid order reaches INVOICED after the fault clears, with automatic
//     catch-up after an outage;
//   - nothing twice: at most one move into INVOICED per order, no move out of INVOICED, one fee
//     capture per invoiced order, the fee ledger balances.
// Fault windows: CHAIN_FAULT_SECONDS (2 in CI, 15 with TOLLGATE_LONG=1) per mode, CHAIN_OUTAGE_SECONDS
// (5 in CI, 60 long). CI runs one backend (Postgres when TEST_DATABASE_URL is set, else PGlite: the
// watcher code path is the same, and watcher*.test.ts cover both); TOLLGATE_LONG=1 runs both.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, reorg, rpcRequest, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { findLedgerImbalances, getFeeBalance } from '../../src/fees/ledger.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, MERCHANT_WALLET, setupMerchant } from '../helpers/orders.ts';
import { startRpcProxy, type RpcFault, type RpcProxy } from '@tollgate/devchain';
import { startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import { blockOf, chainConfigOf, pay, payerAddress, scannedTo, startTestChain, tickedAtHead } from './watcher-fixtures.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

const LONG = process.env.TOLLGATE_LONG === '1';
const FAULT_SECONDS = Number(process.env.CHAIN_FAULT_SECONDS ?? (LONG ? 15 : 2));
const OUTAGE_SECONDS = Number(process.env.CHAIN_OUTAGE_SECONDS ?? (LONG ? 60 : 5));
const CONF = 2;
const FIN = 4;
const FEE = 10_000n;
/** After a fault clears: the watcher's backoff (≤ 30 s) plus a scan. */
const CATCH_UP_MS = 45_000;

const all = backends();
const chosen = LONG ? all : ([all.includes('postgres') ? 'postgres' : 'pglite'] as const);

interface OrderRowLite {
  id: string;
  status: string;
  tx_hash: string | null;
  block_number: number | null;
}

for (const backend of chosen) {
  describe(`chain faults between the watcher and anvil (${backend})`, () => {
    let dev: DevChain;
    let proxy: RpcProxy;
    let s: TestServer;
    let m: Creds;
    let amount = 1_000_000;
    let payerIdx = 0;
    /** Set around a reorg at the confirmation depth: a PAYMENT_CONFIRMED order may point at an orphaned block. */
    let reorgWindow = false;
    /** Bumped when a window opens or closes: a check that spans one read a row from before it. */
    let reorgEpoch = 0;
    const openWindow = () => ((reorgWindow = true), reorgEpoch++);
    const closeWindow = () => ((reorgWindow = false), reorgEpoch++);
    const violations: string[] = [];
    let checks = 0;
    let monitorStop = false;
    let monitor: Promise<void> | undefined;

    const ordersNow = async () => (await s.db.query<OrderRowLite>('SELECT id, status, tx_hash, block_number FROM orders WHERE merchant_id = $1', [m.merchantId])).rows;

    /** No false confirmation, checked against anvil directly. */
    async function checkConfirmations() {
      const epoch = reorgEpoch;
      const windowAtStart = reorgWindow;
      const confirmed = (await ordersNow()).filter((o) => o.status === 'PAYMENT_CONFIRMED' || o.status === 'INVOICED');
      if (confirmed.length === 0) return;
      const head = BigInt(await rpcRequest<string>(dev.rpcUrl, 'eth_blockNumber', []));
      for (const o of confirmed) {
        checks++;
        const need = o.status === 'INVOICED' ? FIN : CONF;
        const receipt = await rpcRequest<{ blockNumber: string; blockHash: string; status: string } | null>(dev.rpcUrl, 'eth_getTransactionReceipt', [o.tx_hash]);
        const block = receipt ? await rpcRequest<{ hash: string } | null>(dev.rpcUrl, 'eth_getBlockByNumber', [receipt.blockNumber, false]) : null;
        const problem = !receipt
          ? 'its transaction is not on the chain'
          : receipt.status !== '0x1'
            ? 'its transaction reverted'
            : block?.hash !== receipt.blockHash
              ? 'its block is not canonical'
              : head - BigInt(receipt.blockNumber) + 1n < BigInt(need)
                ? `depth ${head - BigInt(receipt.blockNumber) + 1n} < ${need}`
                : undefined;
        const exempt = o.status === 'PAYMENT_CONFIRMED' && (windowAtStart || reorgWindow || reorgEpoch !== epoch);
        if (problem && !exempt) violations.push(`${o.id} ${o.status}: ${problem}`);
      }
    }

    before(async () => {
      dev = await startTestChain();
      proxy = await startRpcProxy(dev.rpcUrl);
      s = await startTestServer({ backend, chains: [chainConfigOf(dev, { rpcUrl: proxy.url, confirmations: CONF, finalityConfirmations: FIN, pollIntervalMs: 50 })], http: { rateLimits: false } });
      m = await setupMerchant(s, { topUp: '1000.00' });
      monitor = (async () => {
        while (!monitorStop) {
          await checkConfirmations().catch(() => {}); // anvil busy with a reorg: next round
          await sleep(100);
        }
      })();
    });
    after(async () => {
      monitorStop = true;
      await monitor;
      console.log(`[chain-faults ${backend}] confirmation checks ${checks}, violations ${violations.length}, proxy ${JSON.stringify(proxy?.stats())}`);
      await s?.close();
      await proxy?.close();
      await dev?.stop();
    });

    /** Creates an order through the API for the next payer; returns its id, payer index and amount. */
    async function newOrder() {
      const idx = payerIdx++ % dev.payers.length;
      const amt = amount++;
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: dev.chainId, from_address: payerAddress(dev, idx), amount_wei: String(amt) }) });
      assert.equal(r.status, 402, r.text);
      return { id: r.body.order_id as string, idx, amt: BigInt(amt) };
    }
    async function statusOf(id: string) {
      return (await s.db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [id])).rows[0]!.status;
    }
    /** Waits until every order is INVOICED, mining a block every 300 ms so depth keeps growing. */
    async function waitInvoiced(ids: string[], timeoutMs = CATCH_UP_MS) {
      const deadline = Date.now() + timeoutMs;
      let lastMine = 0;
      for (;;) {
        const st = await Promise.all(ids.map(statusOf));
        if (st.every((x) => x === 'INVOICED')) return Date.now();
        if (Date.now() > deadline) throw new Error(`not all INVOICED after ${timeoutMs} ms: ${ids.map((id, i) => `${id}=${st[i]}`).join(', ')}`);
        if (Date.now() - lastMine > 300) {
          await mine(dev.rpcUrl, 1);
          lastMine = Date.now();
        }
        await sleep(50);
      }
    }
    async function waitStatus(id: string, want: string, timeoutMs = 20_000) {
      await waitFor(
        `${id} ${want}`,
        () => statusOf(id),
        (st) => st === want,
        { timeoutMs, everyMs: 30 },
      );
    }

    const faults: { name: string; fault: RpcFault /** statuses allowed while the fault lasts */; during: string[] }[] = [
      { name: 'connections dropped', fault: { mode: 'drop' }, during: ['CHECKOUT_VERIFIED'] },
      { name: 'JSON-RPC errors', fault: { mode: 'rpc-error' }, during: ['CHECKOUT_VERIFIED'] },
      { name: 'HTTP 500', fault: { mode: 'http-500' }, during: ['CHECKOUT_VERIFIED'] },
      { name: 'half the requests dropped (flaky node)', fault: { mode: 'drop', rate: 0.5 }, during: ['CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED', 'INVOICED'] },
      { name: 'every answer delayed 1.5 s', fault: { mode: 'delay', delayMs: 1500 }, during: ['CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED', 'INVOICED'] },
      // Real depths FIN + 2 and FIN + 1: a node 3 behind shows 3 and 2 (confirmable, not final) …
      { name: 'head lagging 3 blocks', fault: { mode: 'lag', lagBlocks: 3 }, during: ['CHECKOUT_VERIFIED', 'PAYMENT_CONFIRMED'] },
      // … and one FIN + 2 behind shows neither payment's block.
      { name: `head lagging ${FIN + 2} blocks`, fault: { mode: 'lag', lagBlocks: FIN + 2 }, during: ['CHECKOUT_VERIFIED'] },
    ];
    for (const f of faults) {
      it(`${f.name}: no false confirmation during the fault, every payment invoiced after it`, { timeout: (FAULT_SECONDS + 60) * 1000 }, async () => {
        const orders = [await newOrder(), await newOrder()];
        proxy.set(f.fault);
        for (const o of orders) await pay(dev, o.idx, MERCHANT_WALLET as Hex, o.amt); // blocks b, b + 1
        await mine(dev.rpcUrl, FIN); // real depths FIN + 2 and FIN + 1: both final
        const until = Date.now() + FAULT_SECONDS * 1000;
        while (Date.now() < until) {
          for (const o of orders) {
            const st = await statusOf(o.id);
            assert.ok(f.during.includes(st), `${o.id} is ${st} while ${f.name}`);
          }
          await sleep(100);
        }
        proxy.set({ mode: 'pass' });
        await waitInvoiced(orders.map((o) => o.id));
      });
    }

    it(`catches up automatically after a ${OUTAGE_SECONDS} s RPC outage: transfers sent during it are all matched`, { timeout: (OUTAGE_SECONDS + 90) * 1000 }, async () => {
      const orders = [await newOrder(), await newOrder(), await newOrder()];
      proxy.set({ mode: 'drop' });
      const start = Date.now();
      // Spread the payments over the outage, with blocks in between.
      for (const [i, o] of orders.entries()) {
        await sleep((OUTAGE_SECONDS * 1000 * i) / (orders.length + 1));
        await pay(dev, o.idx, MERCHANT_WALLET as Hex, o.amt);
        await mine(dev.rpcUrl, 2);
      }
      await sleep(Math.max(0, start + OUTAGE_SECONDS * 1000 - Date.now()));
      for (const o of orders) assert.equal(await statusOf(o.id), 'CHECKOUT_VERIFIED', 'nothing confirmed while the node is unreachable');
      proxy.set({ mode: 'pass' });
      const restored = Date.now();
      const done = await waitInvoiced(orders.map((o) => o.id));
      console.log(`[chain-faults ${backend}] caught up ${done - restored} ms after a ${OUTAGE_SECONDS} s outage`);
    });

    /** The signed raw transaction, for anvil_reorg to re-mine the same transaction. */
    const rawTx = (hash: Hex) => rpcRequest<Hex>(dev.rpcUrl, 'eth_getRawTransactionByHash', [hash]);

    it('a reorg below the confirmation depth that re-mines the payment: invoiced exactly once', async () => {
      const o = await newOrder();
      const hash = await pay(dev, o.idx, MERCHANT_WALLET as Hex, o.amt); // depth 1 < CONF
      await scannedTo(s.db, dev.chainId, await blockOf(dev.rpcUrl, hash)); // the watcher sees it at depth 1
      await reorg(dev.rpcUrl, 1, [[await rawTx(hash), 0]]);
      await mine(dev.rpcUrl, FIN);
      await waitInvoiced([o.id]);
    });

    it('a payment reorged out below the confirmation depth never confirms; paying again invoices', async () => {
      const o = await newOrder();
      const hash = await pay(dev, o.idx, MERCHANT_WALLET as Hex, o.amt);
      await scannedTo(s.db, dev.chainId, await blockOf(dev.rpcUrl, hash));
      await reorg(dev.rpcUrl, 1); // the transfer is gone
      await mine(dev.rpcUrl, FIN + 1);
      await tickedAtHead(s.db, dev);
      assert.equal(await statusOf(o.id), 'CHECKOUT_VERIFIED');
      await pay(dev, o.idx, MERCHANT_WALLET as Hex, o.amt);
      await mine(dev.rpcUrl, FIN);
      await waitInvoiced([o.id]);
    });

    it('a reorg at the confirmation depth: PAYMENT_CONFIRMED may move back, INVOICED never; the re-mined payment invoices once', async () => {
      const old = await newOrder();
      await pay(dev, old.idx, MERCHANT_WALLET as Hex, old.amt);
      await mine(dev.rpcUrl, FIN);
      await waitInvoiced([old.id]);

      const o = await newOrder();
      const hash = await pay(dev, o.idx, MERCHANT_WALLET as Hex, o.amt);
      await mine(dev.rpcUrl, CONF - 1); // depth = CONF
      await waitStatus(o.id, 'PAYMENT_CONFIRMED');
      // Until the re-mined payment is final, PAYMENT_CONFIRMED may point at the orphaned block or a
      // shallower one (documented); INVOICED stays checked throughout.
      openWindow();
      try {
        // Both blocks replaced; the payment re-mined in the second new block (depth 1).
        const raw = await rawTx(hash);
        await reorg(dev.rpcUrl, CONF, [[raw, CONF - 1]]);
        await mine(dev.rpcUrl, FIN);
        await waitInvoiced([o.id]);
      } finally {
        closeWindow();
      }
      assert.equal(await statusOf(old.id), 'INVOICED');
      const path = (await s.db.query<{ from_status: string | null; to_status: string }>('SELECT from_status, to_status FROM order_transitions WHERE order_id = $1 ORDER BY id', [o.id])).rows;
      console.log(`[chain-faults ${backend}] reorg at depth ${CONF}: ${path.map((p) => p.to_status).join(' → ')}`);
    });

    it('a confirmed payment reorged out at the confirmation depth goes back to CHECKOUT_VERIFIED and never invoices', async () => {
      const o = await newOrder();
      await pay(dev, o.idx, MERCHANT_WALLET as Hex, o.amt);
      await mine(dev.rpcUrl, CONF - 1);
      await waitStatus(o.id, 'PAYMENT_CONFIRMED');
      openWindow();
      try {
        await reorg(dev.rpcUrl, CONF); // the transfer is gone for good
        await mine(dev.rpcUrl, FIN + 1);
        await waitStatus(o.id, 'CHECKOUT_VERIFIED');
      } finally {
        closeWindow();
      }
      await tickedAtHead(s.db, dev);
      assert.equal(await statusOf(o.id), 'CHECKOUT_VERIFIED');
      await pay(dev, o.idx, MERCHANT_WALLET as Hex, o.amt);
      await mine(dev.rpcUrl, FIN);
      await waitInvoiced([o.id]);
    });

    it('nothing twice: one INVOICED per order, none left INVOICED, one fee capture each, ledger balanced, monitor clean', async () => {
      await checkConfirmations();
      assert.deepEqual(violations, []);
      const moves = await s.db.query<{ order_id: string; n: number }>(`SELECT order_id, count(*)::int AS n FROM order_transitions WHERE to_status = 'INVOICED' GROUP BY order_id HAVING count(*) > 1`);
      assert.deepEqual(moves.rows, []);
      const out = await s.db.query(`SELECT * FROM order_transitions WHERE from_status = 'INVOICED'`);
      assert.equal(out.rows.length, 0, 'no move out of INVOICED');
      const invoiced = (await ordersNow()).filter((o) => o.status === 'INVOICED').length;
      assert.equal(invoiced, (await ordersNow()).length, 'every paid order invoiced');
      const fee = (await getFeeBalance(s.db, m.merchantId))!;
      assert.equal(fee.captured, FEE * BigInt(invoiced));
      assert.equal(fee.reserved, 0n);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
    });
  });
}
