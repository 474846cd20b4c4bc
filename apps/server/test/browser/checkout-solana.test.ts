// The hosted checkout page paying on Solana in real Chromium (playwright-core) against a real
// Tollgate whose Solana watcher follows the local SVM (@tollgate/svm): the payer picks USDC on the
// Solana cluster, enters a Solana address, the page shows the order's Solana Pay URL as a QR code
// and a link; a wallet pays exactly what the link says (recipient, amount, mint, reference) through
// the real RPC client; the page reaches "Payment complete" and the order is INVOICED.
// "Pay with <wallet>": a Wallet Standard wallet registers on the page after it loaded (the
// `wallet-standard:register-wallet` event, as @wallet-standard/wallet's registerWallet does); the
// wallet's key lives outside the page, like an extension's: it signs what the page hands it with a
// real keypair and sends it to the local SVM through the real RPC client (@solana/kit). The page
// fetches the transaction from Tollgate (no RPC is allowed by its CSP).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext } from 'playwright-core';
import { generateKeyPairSigner, getBase58Encoder, getBase64EncodedWireTransaction, getBase64Encoder, getTransactionDecoder, signTransaction, type Address } from '@solana/kit';
import { payWithReference, rpcClient, startLocalSvm, type LocalSvm } from '@tollgate/svm';
import { referenceOf } from '../../src/chain/solana/reference.ts';
import { solanaChainFromFile } from '../../src/config/solana.ts';
import { startTestServer, type Creds, type TestServer } from '../helpers/server.ts';
import { axeSerious, browserUnavailable, launchBrowser, screenshot, watchPage } from './browser.ts';
import { LiveClock } from './stack.ts';

const skip = browserUnavailable();

/**
 * A Wallet Standard wallet in the page (plain JS: page.evaluate gets a string, not a transpiled
 * function): `standard:connect` and `solana:signAndSendTransaction` forward to the wallet's back end
 * (exposed functions); a declined request throws code 4001 as wallets do. It registers as a wallet
 * that loads after the app: one `wallet-standard:register-wallet` event whose detail is a callback
 * given the app's registration API.
 */
const TEST_WALLET_SCRIPT = `(() => {
  const chains = ['solana:localnet'];
  const wallet = {
    version: '1.0.0',
    name: 'Test Wallet',
    icon: 'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxIDEiLz4=',
    chains,
    accounts: [],
    features: {
      'standard:connect': {
        version: '1.0.0',
        async connect() {
          const a = await window.__testWalletConnect();
          wallet.accounts = [{ address: a.address, publicKey: new Uint8Array(a.publicKey), chains, features: ['solana:signAndSendTransaction'] }];
          return { accounts: wallet.accounts };
        },
      },
      'solana:signAndSendTransaction': {
        version: '1.0.0',
        supportedTransactionVersions: ['legacy', 0],
        signAndSendTransaction(...inputs) {
          return Promise.all(inputs.map(async (i) => {
            const out = await window.__testWalletSignAndSend(btoa(String.fromCharCode(...i.transaction)), i.chain, i.account.address);
            if (out.declined) throw Object.assign(new Error('User rejected the request.'), { code: 4001 });
            return { signature: new Uint8Array(out.signature) };
          }));
        },
      },
    },
  };
  window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: (api) => api.register(wallet) }));
})()`;
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
    // The paying-address field asks for a Solana-shaped address (base58), not an 0x one.
    assert.equal(await page.locator('#payer').getAttribute('placeholder'), 'e.g. 7EcD…LtV (base58)');
    assert.equal(await page.locator('.option-text').first().textContent(), 'USDC on Solana (local SVM)', 'the cluster by its name');
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

  test('Pay with a Wallet Standard wallet: connect, transaction from Tollgate, signed and sent by the wallet → Payment complete, INVOICED', async () => {
    const created = await s.signed(m, 'POST', '/api/v1/checkout/sessions', {
      body: { checkout_type: 'DIRECT', price: '1.75', line_items_json: JSON.stringify([{ name: 'Cortado', quantity: 1, amount: '1.75' }]) },
    });
    assert.equal(created.status, 200, created.text);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const watch = await watchPage(context);
    const payer = svm.payers[1]!;
    const rpc = rpcClient(svm.rpcUrl);
    const sent: string[] = [];
    let declineNext = true;
    // The wallet's back end (an extension's background, in a real wallet): the page never sees the key.
    await context.exposeFunction('__testWalletConnect', () => ({ address: payer.address, publicKey: Array.from(getBase58Encoder().encode(payer.address)) }));
    await context.exposeFunction('__testWalletSignAndSend', async (b64: string, chain: string, address: string) => {
      if (chain !== 'solana:localnet' || address !== payer.address) throw new Error(`asked to sign for ${address} on ${chain}`);
      if (declineNext) {
        declineNext = false;
        return { declined: true };
      }
      const tx = getTransactionDecoder().decode(getBase64Encoder().encode(b64));
      const signed = await signTransaction([payer.keyPair], tx);
      const sig = await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
      sent.push(sig);
      return { signature: Array.from(signed.signatures[payer.address]!) };
    });
    const page = await context.newPage();
    await page.goto(`${s.url}/checkout/pay#${created.body.checkout_id}`);
    await page.locator('[data-screen="choose"]').waitFor();
    await page.locator('input[name="option"]').first().check();
    await page.getByText('Pay on Solana with the QR code or link below').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Pay with Test Wallet' }).count(), 0, 'no wallet yet');

    // The wallet loads after the page: it announces itself with the register-wallet event.
    await page.evaluate(TEST_WALLET_SCRIPT);
    const button = page.getByRole('button', { name: 'Pay with Test Wallet' });
    await button.waitFor();
    await page.getByText('Or pay on Solana with the QR code or link below').waitFor();
    await screenshot(page, 'solana-wallet-choose');
    assert.deepEqual(await axeSerious(page), [], 'no serious axe violation with a Solana wallet offered');

    // First attempt declined in the wallet: the page says so and offers to send again.
    await button.click();
    await page.getByText('You declined the request in your wallet.').waitFor();
    const retry = page.getByRole('button', { name: 'Send 1.75 USDC with Test Wallet' });
    await retry.waitFor();
    assert.deepEqual(sent, [], 'nothing was sent');
    await retry.click();
    await page.getByRole('heading', { name: 'Payment sent' }).waitFor();
    assert.equal(sent.length, 1);
    await page.getByText(sent[0]!).waitFor(); // the signature the wallet returned, in base58
    await screenshot(page, 'solana-wallet-sent');
    assert.deepEqual(await axeSerious(page), [], 'no serious axe violation on the sent screen');

    const deadline = Date.now() + 60_000;
    while (!(await page.locator('[data-screen="completed"]').count())) {
      if (Date.now() > deadline) throw new Error(`not completed; live region: ${await page.locator('[role="status"]').textContent()}`);
      svm.ledger.advance(1);
      await new Promise((r) => setTimeout(r, 300));
    }
    const session = (await s.request('GET', `/checkout/v1/sessions/${created.body.checkout_id}`)).body as { order: { order_id: string } };
    const order = (await s.signed(m, 'GET', `/api/v1/orders/${session.order.order_id}`)).body;
    assert.equal(order.status, 'INVOICED');
    assert.equal(order.tx_hash, sent[0]);
    assert.equal(order.from_address, payer.address, 'bound to the wallet’s account');
    assert.equal(order.amount_wei, '1750000');
    assert.deepEqual(await watch.cspViolations(page), [], 'no CSP violation');
    assert.deepEqual(watch.notFound, []);
  });

  // Issue 29 item 12: a payment link of a merchant with Solana wallets offers the cluster by its name,
  // asks for a Solana address and is paid through the order's Solana Pay URL (one QR code).
  test('quick-pay link on Solana at 375 px: the cluster by name, a base58 address, the Solana Pay QR, paid → receipt', async () => {
    const p = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'Bag of beans', price: '3.10' } });
    assert.equal(p.status, 200, p.text);
    const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id, options: `${CHAIN_ID}:USDC` } });
    assert.equal(l.status, 200, l.text);
    const context = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    contexts.push(context);
    const watch = await watchPage(context);
    const page = await context.newPage();
    await page.goto(`${s.url}/quickpay/pay/${l.body.link_id}`);
    await page.locator('[data-screen="link"]').waitFor();
    assert.equal(await page.locator('.option-text').first().textContent(), 'USDC on Solana (local SVM)', 'the cluster by its name, not "Chain <id>"');
    assert.equal(await page.locator('#payer').getAttribute('placeholder'), 'e.g. 7EcD…LtV (base58)');
    await page.getByText('Pay on Solana with the QR code below').waitFor();
    await screenshot(page, 'qp-solana-link-mobile');
    assert.deepEqual(await axeSerious(page), [], 'no serious axe violation on the link screen');

    await page.fill('#payer', '0x' + 'ab'.repeat(20));
    await page.getByRole('button', { name: 'Show payment QR code' }).click();
    await page.getByText('Enter a Solana address').waitFor();
    const payer = svm.payers[2]!;
    await page.fill('#payer', payer.address);
    await page.getByRole('button', { name: 'Show payment QR code' }).click();
    await page.locator('[data-screen="pay"]').waitFor();
    assert.equal(await page.locator('svg.qr').count(), 1, 'one QR code: the Solana Pay URL');
    const href = (await page.locator('a#eip681').getAttribute('href'))!;
    const url = new URL(href);
    assert.deepEqual([url.protocol, url.pathname, url.searchParams.get('amount')], ['solana:', wallet, '3.1']);
    const sessionId = new URL(page.url()).hash.slice(1);
    const st = (await s.request('GET', `/quickpay/v1/sessions/${sessionId}`)).body;
    assert.equal(st.terms.payment_url, href);
    assert.deepEqual(url.searchParams.getAll('reference'), [referenceOf(st.order_id)]);
    assert.equal(await page.locator('#product-name').textContent(), 'Bag of beans');
    await page.getByText('Token mint').waitFor();
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no horizontal scroll');
    await screenshot(page, 'qp-solana-pay-mobile');
    assert.deepEqual(await axeSerious(page), [], 'no serious axe violation on the pay screen');

    const usdc = svm.tokens.find((t) => t.symbol === 'USDC')!;
    await payWithReference(rpcClient(svm.rpcUrl), {
      payer,
      recipient: url.pathname as Address,
      mint: usdc.mint,
      tokenProgram: usdc.program,
      decimals: usdc.decimals,
      amount: 3_100_000n,
      references: url.searchParams.getAll('reference') as Address[],
      createRecipientAccount: false,
    });
    const deadline = Date.now() + 60_000;
    while (!(await page.locator('[data-screen="completed"]').count())) {
      if (Date.now() > deadline) throw new Error(`not completed; live region: ${await page.locator('[role="status"]').textContent()}`);
      svm.ledger.advance(1);
      await new Promise((r) => setTimeout(r, 300));
    }
    await page.locator('#receipt-h').waitFor();
    const rows = Object.fromEntries(await page.locator('.receipt dt').evaluateAll((dts) => dts.map((dt) => [dt.textContent!, dt.nextElementSibling!.firstChild!.textContent!])));
    assert.deepEqual([rows.For, rows.Amount, rows['Paid with'], rows['Order reference']], ['Bag of beans', '3.10 USDC', 'USDC on Solana (local SVM)', st.order_id]);
    await screenshot(page, 'qp-solana-completed-mobile');
    assert.deepEqual(await axeSerious(page), [], 'no serious axe violation on the receipt');
    // The page completes at PAYMENT_CONFIRMED; the order is invoiced once the cluster finalizes it.
    while ((await s.signed(m, 'GET', `/api/v1/orders/${st.order_id}`)).body.status !== 'INVOICED') {
      assert.ok(Date.now() < deadline, 'the order reaches INVOICED');
      svm.ledger.advance(1);
      await new Promise((r) => setTimeout(r, 300));
    }
    assert.deepEqual(await watch.cspViolations(page), [], 'no CSP violation');
    assert.deepEqual(watch.notFound, []);
  });
});
