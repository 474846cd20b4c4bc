import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mine, type DevChain } from '@tollgate/devchain';
import { compactVerify, createRemoteJWKSet, decodeProtectedHeader } from 'jose';
import { createWalletClient, defineChain, erc20Abi, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { Value } from '@sinclair/typebox/value';
import { ManifestSchema } from '../../src/quickpay/manifest.ts';
import { backends } from '../helpers/db.ts';
import { setupMerchant } from '../helpers/orders.ts';
import type { Creds, TestServer } from '../helpers/server.ts';
import { startCheckoutServer } from './checkout-fixtures.ts';
import { chainConfigOf, startTestChain } from './watcher-fixtures.ts';
import { freePort } from '../helpers/net.ts';

/**
 * An automated client that knows only a manifest URL, its own wallet and an RPC endpoint for the
 * chains it can pay on. It verifies the manifest with a third-party JOSE library (jose) against the
 * gateway's published JWKS, then follows the signed payload alone: create a session, transfer with
 * viem, poll the status route the manifest names. Nothing here knows Tollgate's routes or the page.
 */
async function payFromManifest(manifestUrl: string, wallet: { privateKey: Hex; rpcUrlOf: (chainId: number) => string }, amount?: string): Promise<{ sessionId: string; status: string; txHash: Hex }> {
  const res = await fetch(manifestUrl);
  assert.equal(res.status, 200);
  const { signature } = (await res.json()) as { signature: string };
  const header = decodeProtectedHeader(signature);
  assert.equal(header.typ, 'tollgate-quickpay-manifest+jws');
  // Trust on the issuer the client was given (the manifest URL's origin), verify with its JWKS.
  const origin = new URL(manifestUrl).origin;
  const { payload } = await compactVerify(signature, createRemoteJWKSet(new URL(`${origin}/.well-known/jwks.json`)), { algorithms: ['EdDSA'] });
  const m = JSON.parse(new TextDecoder().decode(payload));
  assert.ok(Value.Check(ManifestSchema, m as unknown), 'the signed manifest has the published shape');
  assert.equal(m.issuer, origin);
  assert.equal(m.link_id, new URL(manifestUrl).pathname.split('/')[4]);
  assert.equal(m.state, 'ACTIVE');
  const option = m.payment_options[0];
  const account = privateKeyToAccount(wallet.privateKey);
  const create = m.steps.create_session;
  const r = await fetch(create.url, {
    method: create.method,
    headers: { 'content-type': create.content_type },
    body: JSON.stringify({ rail: 'crypto', chain_id: option.chain_id, token_symbol: option.token_symbol, from_address: account.address, ...(m.kind === 'any_amount' ? { amount } : {}), idempotency_key: `agent-${Date.now()}` }),
  });
  const session = (await r.json()) as any;
  assert.equal(r.status, 200, JSON.stringify(session));
  const t = session.terms;
  if (option.amount_wei) assert.equal(t.amount_wei, option.amount_wei, 'the terms match the signed price');
  const chain = defineChain({ id: t.chain_id, name: `chain ${t.chain_id}`, nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [wallet.rpcUrlOf(t.chain_id)] } } });
  const client = createWalletClient({ account, chain, transport: http() });
  const txHash = await client.writeContract({ address: t.token_contract, abi: erc20Abi, functionName: 'transfer', args: [t.pay_to_address, BigInt(t.amount_wei)] });
  const statusUrl = m.steps.poll_status.url_template.replace('{session_id}', session.session_id);
  for (let i = 0; i < 400; i++) {
    const st = (await (await fetch(statusUrl)).json()) as any;
    if (st.status !== 'OPEN') return { sessionId: session.session_id, status: st.status, txHash };
    await new Promise((res2) => setTimeout(res2, 50));
  }
  throw new Error('session stayed OPEN');
}

for (const backend of backends()) {
  describe(`quick-pay agent manifest (${backend})`, () => {
    let dev: DevChain;
    let s: TestServer;
    let m: Creds;
    before(async () => {
      dev = await startTestChain();
      const port = await freePort();
      s = await startCheckoutServer(backend, { chains: [chainConfigOf(dev, { confirmations: 1, finalityConfirmations: 2, pollIntervalMs: 50 })], config: { port, host: '127.0.0.1', publicBaseUrl: `http://127.0.0.1:${port}` } });
      m = await setupMerchant(s);
    });
    after(async () => {
      await s?.close();
      await dev?.stop();
    });

    async function fixedLink() {
      const p = await s.signed(m, 'POST', '/api/v1/products', { body: { name: 'API credits', description: '1000 calls', price: '2.5' } });
      const l = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { product_id: p.body.product_id, options: `${dev.chainId}:USDC` } });
      assert.equal(l.status, 200, l.text);
      return l.body;
    }

    it('the manifest validates, names the link and the issuer, and its signature verifies with the published key', async () => {
      const l = await fixedLink();
      const r = await s.request('GET', `/quickpay/v1/links/${l.link_id}/manifest.json`);
      assert.equal(r.status, 200, r.text);
      const jwks = createRemoteJWKSet(new URL(`${s.url}/.well-known/jwks.json`));
      const { payload, protectedHeader } = await compactVerify(r.body.signature, jwks);
      assert.equal(protectedHeader.alg, 'EdDSA');
      const signed = JSON.parse(new TextDecoder().decode(payload));
      assert.deepEqual(signed, r.body.manifest, 'the clear copy is the signed payload');
      assert.deepEqual(
        [...Value.Errors(ManifestSchema, signed)].map((e) => `${e.path}: ${e.message}`),
        [],
        'the manifest validates against its published schema',
      );
      assert.equal(Value.Check(ManifestSchema, { ...signed, kind: 'other' }), false);
      assert.deepEqual([signed.type, signed.version, signed.link_id, signed.kind, signed.price, signed.rails], ['tollgate.quickpay.link', 1, l.link_id, 'fixed', '2.5', ['crypto']]);
      assert.deepEqual(signed.payment_options, [{ chain_id: dev.chainId, network: `eip155:${dev.chainId}`, token_symbol: 'USDC', token_contract: dev.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase(), decimals: 6, amount_wei: '2500000' }]);
      assert.equal(signed.steps.create_session.url, `${s.url}/quickpay/v1/links/${l.link_id}/sessions`);
      // a tampered payload does not verify
      const [h, p, sig] = (r.body.signature as string).split('.');
      const forged = Buffer.from(JSON.stringify({ ...signed, price: '0.01' })).toString('base64url');
      await assert.rejects(compactVerify(`${h}.${forged}.${sig}`, jwks));
      assert.ok(p);
      // after a key rotation the old signature still verifies (retired keys stay published)
      assert.equal((await s.admin('POST', '/admin/v1/mpp/receipt-keys')).status < 300, true);
      await compactVerify(r.body.signature, createRemoteJWKSet(new URL(`${s.url}/.well-known/jwks.json`)));
      // agent.md
      const md = await s.request('GET', `/quickpay/v1/links/${l.link_id}/agent.md`);
      assert.equal(md.status, 200);
      assert.match(md.headers.get('content-type') ?? '', /^text\/markdown/);
      assert.ok(md.text.includes(`/quickpay/v1/links/${l.link_id}/sessions`) && md.text.includes('2500000') && md.text.includes('jwks.json'), md.text);
      assert.equal((await s.request('GET', '/quickpay/v1/links/pl_nope/manifest.json')).status, 404);
    });

    it('an automated client pays a fixed-price link and an any-amount link from the manifest alone', async () => {
      const l = await fixedLink();
      const manifestUrl = l.manifest_url as string;
      const wallet = { privateKey: dev.payers[2]!.privateKey as Hex, rpcUrlOf: () => dev.rpcUrl };
      const mining = setInterval(() => void mine(dev.rpcUrl, 1).catch(() => {}), 100);
      try {
        const paid = await payFromManifest(manifestUrl, wallet);
        assert.equal(paid.status, 'PAYMENT_CONFIRMED');
        const any = await s.signed(m, 'POST', '/api/v1/payment-links', { body: { min_amount: '1', max_amount: '9', options: `${dev.chainId}:USDT` } });
        const paid2 = await payFromManifest(`${s.url}/quickpay/v1/links/${any.body.link_id}/manifest.json`, { ...wallet, privateKey: dev.payers[3]!.privateKey as Hex }, '4.2');
        assert.equal(paid2.status, 'PAYMENT_CONFIRMED');
        const rec = (await s.signed(m, 'GET', `/api/v1/payment-links/${any.body.link_id}/sessions`)).body.data[0];
        assert.deepEqual([rec.session_id, rec.amount, rec.tx_hash], [paid2.sessionId, '4.2', paid2.txHash]);
      } finally {
        clearInterval(mining);
      }
    });
  });
}
