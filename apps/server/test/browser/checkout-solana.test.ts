// The hosted checkout page paying on Solana in real Chromium (playwright-core) against a real
// Tollgate whose Solana watcher follows the local SVM (@tollgate/svm): the payer picks USDC on the
// Solana cluster, enters a Solana address, the page shows the order's Solana Pay URL as a QR code
// and a link; a wallet pays exactly what the link says (recipient, amount, mint, reference) through
// the real RPC client; the page reaches "Payment complete" and the order is INVOICED.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext } from 'playwright-core';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { payWithReference, rpcClient, startLocalSvm, type LocalSvm } from '@tollgate/svm';
import { referenceOf } from '../../src/chain/solana/reference.ts';
import { solanaChainFromFile } from '../../src/config/solana.ts';
import { startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import { axeSerious, browserUnavailable, launchBrowser, screenshot, watchPage } from './browser.ts';
import { LiveClock } from './stack.ts';

const skip = browserUnavailable();
const CHAIN_ID = 792703800;

describe('hosted checkout page on Solana (browser)', { skip, timeout: 180_000 }, () => {
  let svm: LocalSvm;
  let s: TestServer;
  let m: Creds;
  let wallet: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  before(async () => {
    svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 6 });
    const chain = solanaChainFromFile(
      {
        kind: 'solana',
        chain_id: CHAIN_ID,
        name: 'Solana (local SVM)',
        rpc_url: svm.rpcUrl,
        genesis_hash: svm.genesisHash,
        poll_interval_ms: 50,
        tokens: svm.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, program: t.symbol === 'USDT' ? 'token-2022' : 'spl-token' })),
      },
      0,
    );
    [s, browser] = await Promise.all([startTestServer({ backend: 'pglite', clock: new LiveClock(), config: { solanaChains: [chain] } }), launchBrowser()]);
    m = await s.createMerchant({ name: 'Solana Coffee', topUp: '10.00' });
    wallet = (await generateKeyPairSigner()).address;
    for (const t of ['USDC', 'USDT']) {
      const r = await s.admin('POST', `/admin/v1/merchants/${m.merchantId}/wallets`, { chain_id: CHAIN_ID, token_symbol: t, address: wallet });
      assert.equal(r.status, 201, r.text);
    }
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await s?.close();
    await svm?.stop();
  });

  test('QR code and link of the Solana Pay URL; paid from a wallet by that URL → Payment complete, order INVOICED', async () => {
    const created = await s.signed(m, 'POST', '/api/v1/checkout/sessions', {
      body: { checkout_type: 'DIRECT', price: '2.50', line_items_json: JSON.stringify([{ name: 'Espresso', quantity: 1, amount: '2.50' }]) },
    });
    assert.equal(created.status, 200, created.text);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const watch = await watchPage(context);
    const page = await context.newPage();
    await page.goto(`${s.url}/checkout/pay#${created.body.checkout_id}`);
    await page.locator('[data-screen="choose"]').waitFor();

    // The Solana options are offered; EVM browser wallets are not offered for them.
    const usdcOption = page.locator('input[name="option"]').first();
    assert.equal(await usdcOption.getAttribute('value'), `${CHAIN_ID}:USDC`);
    await usdcOption.check();
    await page.getByText('Pay on Solana with the QR code or link below').waitFor();
    await screenshot(page, 'solana-choose');

    // A malformed address is refused in the page; a Solana address binds.
    await page.fill('#payer', '0x' + 'ab'.repeat(20));
    await page.getByRole('button', { name: 'Show payment QR code' }).click();
    await page.getByText('Enter a Solana address').waitFor();
    const payer = svm.payers[0]!;
    await page.fill('#payer', payer.address);
    await page.getByRole('button', { name: 'Show payment QR code' }).click();
    await page.locator('[data-screen="pay"]').waitFor();
    assert.equal(await page.locator('svg.qr').count(), 1, 'the QR code is drawn');
    const href = (await page.locator('a#eip681').getAttribute('href'))!;
    const url = new URL(href);
    assert.equal(url.protocol, 'solana:');
    assert.equal(url.pathname, wallet);
    assert.equal(url.searchParams.get('amount'), '2.5');
    const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
    assert.equal(url.searchParams.get('spl-token'), usdc.mint);
    const session = (await s.request('GET', `/checkout/v1/sessions/${created.body.checkout_id}`)).body as { order: { order_id: string; payment_url: string } };
    assert.deepEqual(url.searchParams.getAll('reference'), [referenceOf(session.order.order_id)]);
    assert.equal(session.order.payment_url, href, 'the public view carries the same URL (reload)');
    await page.getByText('Token mint').waitFor();
    await page.getByText('they carry this order’s reference').waitFor();
    await screenshot(page, 'solana-pay-qr');
    assert.deepEqual(await axeSerious(page), [], 'no serious axe violation on the Solana pay screen');

    // A wallet pays what the link says, carrying the reference.
    const sig = await payWithReference(rpcClient(svm.rpcUrl), {
      payer,
      recipient: url.pathname as Address,
      mint: usdc.mint,
      tokenProgram: usdc.program,
      decimals: usdc.decimals,
      amount: 2_500_000n,
      references: url.searchParams.getAll('reference') as Address[],
      createRecipientAccount: true,
    });
    const deadline = Date.now() + 60_000;
    while (!(await page.locator('[data-screen="completed"]').count())) {
      if (Date.now() > deadline) throw new Error(`not completed; live region: ${await page.locator('[role="status"]').textContent()}`);
      svm.ledger.advance(1);
      await new Promise((r) => setTimeout(r, 300));
    }
    await screenshot(page, 'solana-completed');
    const order = (await s.signed(m, 'GET', `/api/v1/orders/${session.order.order_id}`)).body;
    assert.equal(order.status, 'INVOICED');
    assert.equal(order.tx_hash, sig);
    assert.deepEqual(await watch.cspViolations(page), [], 'no CSP violation');
    assert.deepEqual(watch.notFound, []);
  });
});
