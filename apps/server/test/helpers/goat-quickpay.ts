// A payer of GOAT's quick-pay wire, written for these tests from GOAT's documented and observed
// behaviour (its API reference and its quick-pay client's checks); no code of GOAT's. Every check
// below is one GOAT's client makes, so a Tollgate answer it would reject fails the test here.
import assert from 'node:assert/strict';
import { createWalletClient, defineChain, erc20Abi, http, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const LINK_PATH = /^\/quickpay\/([^/]+)(?:\/(?:agent\.md|manifest\.json))?$/;
const MERCHANT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const PRODUCT_KEY = /^[A-Za-z0-9._:~-]{1,64}$/;
const PRICE = /^\d{1,40}(\.\d{1,18})?$/;
const WEI = /^\d+$/;

/** The link check: origin (https, or http on loopback) and `/quickpay/<id>[/agent.md|/manifest.json]`. */
export function goatTarget(link: string): { origin: string; merchantId: string; manifestUrl: string } {
  const u = new URL(link);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  assert.ok(u.protocol === 'https:' || (u.protocol === 'http:' && loopback), `not an accepted origin: ${link}`);
  const m = LINK_PATH.exec(u.pathname);
  assert.ok(m, `GOAT's client refuses this link path: ${u.pathname}`);
  const merchantId = decodeURIComponent(m[1]!);
  assert.match(merchantId, MERCHANT_ID);
  return { origin: u.origin, merchantId, manifestUrl: `${u.origin}/quickpay/${merchantId}/manifest.json` };
}

/** Fetches and checks a manifest as GOAT's client does; returns it. */
export async function goatManifest(link: string): Promise<any> {
  const t = goatTarget(link);
  const res = await fetch(t.manifestUrl, { headers: { accept: 'application/json' }, redirect: 'error' });
  assert.equal(res.status, 200, `manifest: HTTP ${res.status}`);
  const m = (await res.json()) as any;
  assert.equal(m.schema, 'goatx402.quickpay.v1');
  assert.equal(typeof m.merchant?.merchant_id, 'string');
  assert.equal(m.merchant.merchant_id, t.merchantId, 'the manifest names the merchant of the link path');
  assert.equal(typeof m.rails, 'object');
  const x = m.rails.x402 ?? { enabled: false, tokens: [] };
  if (x.enabled) {
    for (const tk of x.tokens) {
      assert.ok(Number.isInteger(tk.chain_id) && tk.chain_id > 0);
      assert.ok(typeof tk.token_symbol === 'string' && tk.token_symbol.trim() !== '');
      assert.ok(typeof tk.token_contract === 'string' && tk.token_contract.trim() !== '');
      assert.ok(Number.isInteger(tk.decimals) && tk.decimals >= 0 && tk.decimals <= 36);
      assert.match(tk.min_amount_wei, WEI);
      if (tk.max_amount_wei !== undefined) {
        assert.match(tk.max_amount_wei, WEI);
        assert.ok(BigInt(tk.max_amount_wei) >= BigInt(tk.min_amount_wei));
      }
    }
  }
  assert.ok(x.products === undefined || Array.isArray(x.products));
  for (const p of x.products ?? []) {
    assert.match(p.product_key, PRODUCT_KEY);
    assert.ok(typeof p.name === 'string' && p.name.trim() !== '');
    assert.ok(PRICE.test(p.price) && /[1-9]/.test(p.price), `price ${p.price}`);
    if (p.image_url !== undefined) assert.equal(new URL(p.image_url).protocol, 'https:');
    if (p.description !== undefined) assert.ok([...p.description].length <= 2000);
  }
  const mpp = m.rails.mpp ?? { enabled: false, routes: [] };
  if (mpp.enabled) for (const r of mpp.routes) assert.ok(typeof r.route_canonical === 'string' && WEI.test(r.amount_wei));
  return m;
}

/** price × 10^decimals, exactly (GOAT's client re-derives a product's amount this way). */
export function toWei(price: string, decimals: number): string {
  const [i, f = ''] = price.split('.');
  assert.ok(f.length <= decimals, `${price} is not representable with ${decimals} decimals`);
  return BigInt(`${i}${f.padEnd(decimals, '0')}`).toString();
}

export interface GoatPayment {
  created: any;
  txHash: Hex | undefined;
  final: any;
}

/**
 * Creates a session, checks its x402 terms against what the payer computed, transfers only to a
 * fresh (`ORDER_CREATED`, not reused) session, then polls to a terminal status — GOAT's order of work.
 */
export async function goatPay(
  link: string,
  o: { privateKey: Hex; rpcUrl: string; chainId: number; tokenContract: string; decimals: number; productKey?: string; amountWei?: string; idempotencyKey?: string; poll?: { tries: number; everyMs: number } },
): Promise<GoatPayment> {
  const t = goatTarget(link);
  const account = privateKeyToAccount(o.privateKey);
  const body = {
    merchant_id: t.merchantId,
    payer_addr: account.address,
    chain_id: o.chainId,
    token_contract: o.tokenContract,
    ...(o.productKey ? { product_key: o.productKey } : { amount_wei: o.amountWei }),
    ...(o.idempotencyKey ? { idempotency_key: o.idempotencyKey } : {}),
  };
  const res = await fetch(`${t.origin}/quickpay/v1/x402/sessions`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body), redirect: 'error' });
  const created = (await res.json()) as any;
  assert.equal(res.status, 200, JSON.stringify(created));
  assert.ok(typeof created.session_id === 'string' && created.session_id, 'session_id');
  let txHash: Hex | undefined;
  const fresh = ['ORDER_CREATED', 'CREATED'].includes(created.status ?? 'ORDER_CREATED') && created.reused !== true;
  if (fresh) {
    const want = o.productKey ? undefined : o.amountWei;
    const accept = (created.x402?.accepts ?? []).find(
      (a: any) => a?.scheme === 'exact' && a.network === `eip155:${o.chainId}` && (want === undefined || String(a.amount) === want) && String(a.asset).toLowerCase() === o.tokenContract.toLowerCase() && typeof a.payTo === 'string' && a.payTo.length > 0,
    );
    assert.ok(accept, `no x402 accept matches: ${JSON.stringify(created.x402)}`);
    const chain = defineChain({ id: o.chainId, name: `chain ${o.chainId}`, nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [o.rpcUrl] } } });
    const client = createWalletClient({ account, chain, transport: http() });
    txHash = await client.writeContract({ address: accept.asset, abi: erc20Abi, functionName: 'transfer', args: [accept.payTo, BigInt(accept.amount)] });
  }
  const poll = o.poll ?? { tries: 400, everyMs: 50 };
  let final: any;
  for (let i = 0; i < poll.tries; i++) {
    const r = await fetch(`${t.origin}/quickpay/v1/x402/sessions/${encodeURIComponent(created.session_id)}`, { headers: { accept: 'application/json' }, redirect: 'error' });
    assert.equal(r.status, 200);
    final = await r.json();
    if (['PAYMENT_CONFIRMED', 'EXPIRED', 'FAILED', 'CANCELLED'].includes(final.status)) break;
    await new Promise((res2) => setTimeout(res2, poll.everyMs));
  }
  return { created, txHash, final };
}
