// Attribution through the HTTP API with the running watcher on a real anvil, on every database
// backend (issue 12, docs/attribution.md): the reported bug end to end, accept-payment (happy path,
// not final, nothing to accept, double and concurrent accept, wrong merchant, several payments,
// fee short), the tolerance admin route and CLI, and the zero from_address.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { findLedgerImbalances, getFeeBalance } from '../../src/fees/ledger.ts';
import { backends } from '../helpers/db.ts';
import { buildOrderBody, MERCHANT_WALLET, setupMerchant } from '../helpers/orders.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { startTestServer, TEST_ADMIN_TOKEN, type Creds, type TestServer } from '../helpers/server.ts';
import { chainConfigOf, pay, payerAddress, startTestChain } from './watcher-fixtures.ts';
import { waitFor } from '../helpers/wait.ts';

const FINALITY = 4;
const FEE = 10_000n;

for (const backend of backends()) {
  describe(`attribution through the API (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    let m: Creds;
    let other: Creds;
    before(async () => {
      dev = await startTestChain();
      s = await startTestServer({ backend, chains: [chainConfigOf(dev, { confirmations: 2, finalityConfirmations: FINALITY, pollIntervalMs: 50 })] });
      m = await setupMerchant(s);
      other = await setupMerchant(s, { name: 'Other Merchant' });
    });
    after(async () => {
      await s?.close();
      await dev?.stop();
    });

    const create = async (payer: number, amount: string, token = 'USDC') => {
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body: buildOrderBody({ chain_id: dev.chainId, from_address: payerAddress(dev, payer), amount_wei: amount, token_symbol: token }) });
      assert.equal(r.status, 402, r.text);
      return r.body.order_id as string;
    };
    const record = async (id: string, who = m) => (await s.signed(who, 'GET', `/api/v1/orders/${id}`)).body;
    const accept = (id: string, body: Record<string, unknown> = {}, who = m) => s.signed(who, 'POST', `/api/v1/orders/${id}/accept-payment`, { body });
    const waitForRecord = (id: string, what: string, ok: (r: any) => boolean, timeoutMs = 20_000) => waitFor(`order ${id}: ${what}`, () => record(id), ok, { timeoutMs });
    const final = (r: any) => (r.observed_transfers ?? []).some((t: any) => !t.accepted && !t.orphaned && t.confirmations >= FINALITY);
    const transitions = async (id: string) => (await s.db.query<{ from_status: string; to_status: string; trigger: string }>('SELECT from_status, to_status, trigger FROM order_transitions WHERE order_id = $1 ORDER BY id', [id])).rows;

    it('refuses from_address = the zero address with zero_from_address, creating nothing', async () => {
      const body = buildOrderBody({ chain_id: dev.chainId, from_address: `0x${'0'.repeat(40)}` });
      const r = await s.signed(m, 'POST', '/api/v1/orders', { body });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.code, 'zero_from_address');
      assert.equal(r.body.param, 'from_address');
      const { rows } = await s.db.query('SELECT 1 FROM orders WHERE dapp_order_id = $1', [body.dapp_order_id]);
      assert.equal(rows.length, 0);
    });

    it('the reported bug end to end, then accepting B’s late payment (not final, wrong merchant, nothing on A, accept, repeat)', async () => {
      const a = await create(0, '500000');
      const b = await create(0, '1000000');
      assert.equal((await s.signed(m, 'POST', `/api/v1/orders/${b}/cancel`, { body: {} })).status, 200);
      const feeBefore = (await getFeeBalance(s.db, m.merchantId))!;
      const hash = await pay(dev, 0, MERCHANT_WALLET as Hex, 1_000_000n);

      const late = await waitForRecord(b, 'late payment recorded', (r) => r.needs_reconciliation === true);
      assert.equal(late.status, 'CANCELLED');
      assert.equal(late.observed_transfers[0].kind, 'late');
      assert.equal(late.observed_transfers[0].tx_hash, hash);
      const aRec = await record(a);
      assert.equal(aRec.status, 'CHECKOUT_VERIFIED');
      assert.equal(aRec.tx_hash, undefined, 'A untouched');
      assert.equal(aRec.paid_amount_wei, undefined);

      const early = await accept(b);
      assert.equal(early.status, 409, early.text);
      assert.equal(early.body.code, 'payment_not_final');
      assert.equal((await record(b)).status, 'CANCELLED');

      await mine(dev.rpcUrl, FINALITY);
      await waitForRecord(b, 'finality', final);
      const wrong = await accept(b, {}, other);
      assert.equal(wrong.status, 404);
      assert.equal(wrong.body.code, 'order_not_found');
      const none = await accept(a);
      assert.equal(none.status, 409);
      assert.equal(none.body.code, 'no_payment_to_accept');

      const ok = await accept(b);
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.status, 'INVOICED');
      assert.equal(ok.body.tx_hash, hash);
      assert.equal(ok.body.paid_amount_wei, '1000000');
      assert.ok(ok.body.invoiced_at);
      assert.equal(ok.body.needs_reconciliation, undefined);
      assert.equal(ok.body.observed_transfers[0].accepted, true);
      const again = await accept(b);
      assert.equal(again.status, 200, 'idempotent');
      assert.deepEqual({ ...again.body, updated_at: 0 }, { ...ok.body, updated_at: 0 });

      assert.deepEqual(
        (await transitions(b)).map((t) => `${t.from_status}->${t.to_status}:${t.trigger}`),
        ['null->CHECKOUT_VERIFIED:create', 'CHECKOUT_VERIFIED->CANCELLED:cancel', 'CANCELLED->INVOICED:accept'],
      );
      const feeAfter = (await getFeeBalance(s.db, m.merchantId))!;
      assert.equal(feeAfter.captured - feeBefore.captured, FEE, 'late capture of the released fee');
      assert.equal(feeBefore.available - feeAfter.available, FEE);
      assert.deepEqual(await findLedgerImbalances(s.db), []);
      const { rows: kinds } = await s.db.query<{ kind: string }>('SELECT kind FROM fee_ledger WHERE order_id = $1 ORDER BY id', [b]);
      assert.deepEqual(
        kinds.map((k) => k.kind),
        ['reserve', 'release', 'late_capture'],
      );
      const { rows: evs } = await s.db.query<{ event: string }>('SELECT event FROM webhook_events WHERE order_id = $1 ORDER BY seq', [b]);
      assert.deepEqual(
        evs.map((e) => e.event),
        ['order.cancelled', 'order.late_payment', 'order.invoiced'],
      );
      assert.equal((await record(a)).status, 'CHECKOUT_VERIFIED');
    });

    it('accepts an under-payment of a live order; several recorded payments need tx_hash; concurrent accepts invoice once', async () => {
      const id = await create(1, '2000000');
      const first = await pay(dev, 1, MERCHANT_WALLET as Hex, 1_500_000n);
      await pay(dev, 1, MERCHANT_WALLET as Hex, 300_000n);
      await mine(dev.rpcUrl, FINALITY);
      await waitForRecord(id, 'two final under-payments', (r) => (r.observed_transfers ?? []).filter((t: any) => t.kind === 'underpaid' && t.confirmations >= FINALITY).length === 2);
      const ambiguous = await accept(id);
      assert.equal(ambiguous.status, 400);
      assert.equal(ambiguous.body.code, 'invalid_request');
      assert.equal(ambiguous.body.param, 'tx_hash');
      const unknown = await accept(id, { tx_hash: `0x${'ab'.repeat(32)}` });
      assert.equal(unknown.body.code, 'no_payment_to_accept');

      const [x, y] = await Promise.all([accept(id, { tx_hash: first }), accept(id, { tx_hash: first, log_index: 0 })]);
      assert.deepEqual([x.status, y.status], [200, 200], `${x.text} ${y.text}`);
      assert.equal(x.body.status, 'INVOICED');
      assert.equal(x.body.paid_amount_wei, '1500000');
      assert.deepEqual(
        (await transitions(id)).filter((t) => t.to_status === 'INVOICED').map((t) => `${t.from_status}:${t.trigger}`),
        ['CHECKOUT_VERIFIED:accept'],
      );
      const { rows: caps } = await s.db.query("SELECT 1 FROM fee_ledger WHERE order_id = $1 AND kind = 'capture'", [id]);
      assert.equal(caps.length, 1, 'one capture');
      const rec = await record(id);
      assert.equal(rec.needs_reconciliation, true, 'the second under-payment still needs the merchant (refund)');
      const later = await accept(id, { tx_hash: rec.observed_transfers.find((t: any) => t.tx_hash !== first).tx_hash });
      assert.equal(later.body.code, 'no_payment_to_accept', 'an invoiced order accepts nothing else');
    });

    it('refuses a late capture the fee balance cannot cover, changing nothing', async () => {
      const id = await create(2, '750000');
      assert.equal((await s.signed(m, 'POST', `/api/v1/orders/${id}/cancel`, { body: {} })).status, 200);
      await pay(dev, 2, MERCHANT_WALLET as Hex, 750_000n);
      await mine(dev.rpcUrl, FINALITY);
      await waitForRecord(id, 'final late payment', final);
      const saved = (await getFeeBalance(s.db, m.merchantId))!;
      // Drained behind the ledger's back for this case only; restored below.
      await s.db.query('UPDATE fee_accounts SET available = 0 WHERE merchant_id = $1', [m.merchantId]);
      try {
        const r = await accept(id);
        assert.equal(r.status, 400, r.text);
        assert.equal(r.body.code, 'insufficient_fee_balance');
        assert.equal((await record(id)).status, 'CANCELLED');
        assert.equal((await transitions(id)).length, 2);
      } finally {
        await s.db.query('UPDATE fee_accounts SET available = $2 WHERE merchant_id = $1', [m.merchantId, saved.available.toString()]);
      }
    });

    it('tolerance: admin route validates and applies; a tolerated payment is invoiced by the watcher', async () => {
      const path = `/admin/v1/merchants/${m.merchantId}/underpayment-tolerance`;
      assert.equal((await s.admin('PUT', path, { underpay_tolerance_bps: 1001 })).body.code, 'invalid_request');
      assert.equal((await s.admin('PUT', path, { underpay_tolerance_bps: -1 })).status, 400);
      assert.equal((await s.admin('PUT', '/admin/v1/merchants/m_nobody/underpayment-tolerance', { underpay_tolerance_bps: 5 })).body.code, 'merchant_not_found');
      const set = await s.admin('PUT', path, { underpay_tolerance_bps: 100 });
      assert.deepEqual(set.body, { merchant_id: m.merchantId, underpay_tolerance_bps: 100 });
      assert.equal((await s.admin('GET', `/admin/v1/merchants/${m.merchantId}`)).body.underpay_tolerance_bps, 100);

      const id = await create(3, '3000000');
      await pay(dev, 3, MERCHANT_WALLET as Hex, 2_970_000n); // 1 % short
      await mine(dev.rpcUrl, FINALITY);
      const done = await waitForRecord(id, 'INVOICED', (r) => r.status === 'INVOICED');
      assert.equal(done.paid_amount_wei, '2970000');
      assert.equal(done.needs_reconciliation, undefined);
      await s.admin('PUT', path, { underpay_tolerance_bps: 0 });
    });

    it('CLI: merchant set-tolerance', async () => {
      const env = { TOLLGATE_URL: s.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN };
      const run = async (...args: string[]) => {
        const p = spawnTollgate(args, env);
        const code = p.child.exitCode ?? (await new Promise<number | null>((r) => p.child.once('exit', r)));
        return { code, out: p.output() };
      };
      const ok = await run('merchant', 'set-tolerance', other.merchantId, '--bps', '25', '--json');
      assert.equal(ok.code, 0, ok.out);
      assert.deepEqual(JSON.parse(ok.out), { merchant_id: other.merchantId, underpay_tolerance_bps: 25 });
      const bad = await run('merchant', 'set-tolerance', other.merchantId, '--bps', '2000');
      assert.equal(bad.code, 1);
      assert.match(bad.out, /0 to 1000/);
      assert.equal((await s.admin('GET', `/admin/v1/merchants/${other.merchantId}`)).body.underpay_tolerance_bps, 25);
    });
  });
}
