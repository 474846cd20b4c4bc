// The published shape: `tsc -p packages/sdk/tsconfig.build.json` into a temporary package, then a
// plain `.mjs` file, run by plain node (no tsx) in a child process outside the repository, imports
// `@tollgate/sdk` through the package's `exports` and makes a signed request. A TypeScript consumer
// type-checks against the emitted declarations. Nothing built is left in the repository.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SDK = join(ROOT, 'packages/sdk');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

const CHECK_MJS = `
import http from 'node:http';
import { createHmac } from 'node:crypto';
import * as sdk from '@tollgate/sdk';
const { TollgateClient, TollgateApiError, TollgateError, verifyWebhook, isTerminalOrderStatus, SDK_VERSION } = sdk;

const terms = { x402Version: 2, resource: { url: 'u', description: 'd', mimeType: 'application/json' },
  accepts: [{ scheme: 'exact', network: 'eip155:2345', amount: '1000000', asset: '0xa', payTo: '0xb', maxTimeoutSeconds: 60, extra: { flow: 'ERC20_DIRECT', tokenSymbol: 'USDC', decimals: 6 } }],
  extensions: { paymentTerms: { destinationChain: 'eip155:2345', expiresAt: 1900000000, paymentMethod: 'transfer', receiveType: 'DIRECT' } },
  order_id: 'ord_built', flow: 'ERC20_DIRECT', token_symbol: 'USDC' };
const seen = [];
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    seen.push({ headers: req.headers, body });
    if (req.method === 'POST') { res.writeHead(402, { 'content-type': 'application/json' }); return res.end(JSON.stringify(terms)); }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'order not found', code: 'order_not_found', request_id: 'req_b' }));
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const client = new TollgateClient({ baseUrl: 'http://127.0.0.1:' + server.address().port, apiKey: 'key_b', apiSecret: 'sec_b' });
const order = await client.createOrder({ dappOrderId: 'b-1', chainId: 2345, tokenSymbol: 'USDC', fromAddress: '0x01', amountWei: 1000000n });
let apiErr;
try { await client.getOrderStatus('ord_nope'); } catch (e) { apiErr = e; }
server.close();

const h = seen[0].headers;
const canonical = 'amount_wei=1000000&api_key=key_b&chain_id=2345&dapp_order_id=b-1&from_address=0x01&nonce=' + h['x-nonce'] + '&timestamp=' + h['x-timestamp'] + '&token_symbol=USDC';
const raw = '{"id":"evt_1","event":"order.invoiced","payload":{"order_id":"ord_built"},"created_at":"2025-01-01T00:00:00Z"}';
const whSig = 'sha256=' + createHmac('sha256', 'whsec_x').update(raw).digest('hex');
console.log(JSON.stringify({
  exports: Object.keys(sdk).sort(),
  orderId: order.orderId, payToAddress: order.payToAddress, amountWei: order.amountWei,
  body: seen[0].body,
  signOk: h['x-sign'] === createHmac('sha256', 'sec_b').update(canonical).digest('hex'),
  errIsApi: apiErr instanceof TollgateApiError, errIsBase: apiErr instanceof TollgateError, errCode: apiErr && apiErr.code, errRequestId: apiErr && apiErr.requestId,
  webhookOk: verifyWebhook({ secret: 'whsec_x', rawBody: raw, headers: { 'x-webhook-signature': whSig }, toleranceSeconds: null }).ok,
  terminal: isTerminalOrderStatus('INVOICED'), version: SDK_VERSION,
}));
`;

const CONSUMER_TS = `
import { TollgateClient, TollgateApiError, verifyWebhook, WEBHOOK_EVENTS, type CreatedOrder, type OrderStatusRecord, type PaymentLink, type PaymentLinkSession, type WebhookEvent, type WebhookEventName } from '@tollgate/sdk';
const c = new TollgateClient({ baseUrl: 'http://x', apiKey: 'k', apiSecret: 's' });
export const p: Promise<CreatedOrder> = c.createOrder({ dappOrderId: 'a', chainId: 1, tokenSymbol: 'USDC', fromAddress: '0x', amountWei: 1n });
export const w: Promise<OrderStatusRecord> = c.waitForOrder('ord_1', { onStatusChange: (o, prev) => console.log(o.status, prev) });
export function f(e: unknown): number | undefined { return e instanceof TollgateApiError ? e.status : undefined; }
export const v = verifyWebhook;
export const names: readonly WebhookEventName[] = WEBHOOK_EVENTS;
export function paidBy(e: WebhookEvent): string | undefined {
  return e.event === 'mpp.payment.confirmed' ? e.payload.payer : e.event === 'x402.settlement.confirmed' ? e.payload.payer : undefined;
}
export const links: Promise<{ data: PaymentLinkSession[] }> = c.quickpay.listPaymentLinkSessions('pl_1', { limit: 10 });
export const l: Promise<PaymentLink> = c.quickpay.createPaymentLink({ minAmount: '1', maxAmount: '5', options: [{ chainId: 1, tokenSymbol: 'USDC' }] });
// @ts-expect-error the declarations are real types, not any
c.getOrderStatus(5);
// @ts-expect-error a price is a decimal string, never a number
c.quickpay.createProduct({ name: 'x', price: 9.99 });
`;

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : [join(dir, d.name)]));
}

describe('built package (dist) used from plain JavaScript', () => {
  let tmp: string;
  let pkg: string;

  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'tollgate-sdk-build-'));
    pkg = join(tmp, 'node_modules/@tollgate/sdk');
    mkdirSync(pkg, { recursive: true });
    const r = spawnSync(process.execPath, [TSC, '-p', join(SDK, 'tsconfig.build.json'), '--outDir', join(pkg, 'dist')], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, `tsc failed:\n${r.stdout}\n${r.stderr}`);
    cpSync(join(SDK, 'package.json'), join(pkg, 'package.json'));
    cpSync(join(SDK, 'README.md'), join(pkg, 'README.md'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('emits .js and .d.ts for the SDK and the bundled protocol code; the exports targets exist', () => {
    const files = walk(join(pkg, 'dist'))
      .map((f) => f.slice(pkg.length + 1))
      .sort();
    assert.ok(files.includes('dist/sdk/src/index.js') && files.includes('dist/sdk/src/index.d.ts'), files.join('\n'));
    assert.ok(files.includes('dist/protocol/src/signing.js'));
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
    assert.equal(manifest.name, '@tollgate/sdk');
    for (const target of [manifest.exports['.'].types, manifest.exports['.'].import, manifest.types]) assert.ok(existsSync(join(pkg, target)), target);
    for (const f of files.filter((x) => x.endsWith('.js'))) {
      // code lines only: JSDoc examples legitimately mention '@tollgate/sdk'
      const js = readFileSync(join(pkg, f), 'utf8')
        .split('\n')
        .filter((l) => !/^\s*(\*|\/\/|\/\*)/.test(l))
        .join('\n');
      assert.doesNotMatch(js, /from\s+["'][^"']+\.ts["']/, `${f} imports a .ts file`);
      assert.doesNotMatch(js, /from\s+["']@tollgate\//, `${f} imports a workspace package`);
    }
  });

  it('a plain .mjs imports @tollgate/sdk, signs a real request and gets typed errors', () => {
    writeFileSync(join(tmp, 'check.mjs'), CHECK_MJS);
    const r = spawnSync(process.execPath, ['check.mjs'], { cwd: tmp, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    const version = JSON.parse(readFileSync(join(SDK, 'package.json'), 'utf8')).version;
    assert.deepEqual(out, {
      exports: [
        'ERROR_CATALOG',
        'MoneyError',
        'ORDER_STATUSES',
        'QuickPayClient',
        'SDK_VERSION',
        'TERMINAL_ORDER_STATUSES',
        'TollgateApiError',
        'TollgateClient',
        'TollgateError',
        'TollgateNetworkError',
        'TollgateResponseError',
        'TollgateTimeoutError',
        'TollgateUnknownOutcomeError',
        'TollgateWebhookError',
        'WEBHOOK_EVENTS',
        'formatUnits',
        'isErrorCode',
        'isTerminalOrderStatus',
        'parseDecimal',
        'paymentLinkBody',
        'productBody',
        'signCalldataSignRequest',
        'signEip3009Authorization',
        'verifyMppReceipt',
        'verifyWebhook',
      ],
      orderId: 'ord_built',
      payToAddress: '0xb',
      amountWei: '1000000',
      body: '{"dapp_order_id":"b-1","chain_id":2345,"token_symbol":"USDC","from_address":"0x01","amount_wei":"1000000"}',
      signOk: true,
      errIsApi: true,
      errIsBase: true,
      errCode: 'order_not_found',
      errRequestId: 'req_b',
      webhookOk: true,
      terminal: true,
      version,
    });
  });

  it('a TypeScript consumer type-checks against the emitted declarations', () => {
    writeFileSync(join(tmp, 'package.json'), '{"type":"module"}');
    writeFileSync(join(tmp, 'consumer.ts'), CONSUMER_TS);
    const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types'), 'consumer.ts'];
    const r = spawnSync(process.execPath, [TSC, ...args], { cwd: tmp, encoding: 'utf8' });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  });
});
