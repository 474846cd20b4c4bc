// Shared fixtures of the machine-payment tests (mpp-*.test.ts): an anvil chain, a Tollgate (API role:
// verify reads the chain itself, no watcher needed) with a merchant whose USDC route is priced,
// and helpers to ask for challenges, pay them and verify.
import { mine, rpcRequest, transferToken, type DevChain } from '@tollgate/devchain';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { SettlementSigner } from '../../src/config/schema.ts';
import type { Backend } from '../helpers/db.ts';
import { setupMerchant } from '../helpers/orders.ts';
import { startTestServer, type Creds, type TestResponse, type TestServer } from '../helpers/server.ts';
import { chainConfigOf, startTestChain } from './watcher-fixtures.ts';

export const PRICE = 1_000_000n;
export const ROUTE = 'GET:api:data';
/** Confirmations for finality on the test chain: a payment is final at depth 3. */
export const FINALITY = 3;

export interface MppStack {
  dev: DevChain;
  s: TestServer;
  m: Creds;
  usdc: Hex;
  close(): Promise<void>;
}

/**
 * `settle`: USDC marked EIP-3009 and an executor key (payer 8 of the dev chain), so challenges also
 * offer `authorization` credentials, which the gateway settles.
 */
export async function startMppStack(backend: Backend, opts: { settle?: boolean } = {}): Promise<MppStack> {
  const dev = await startTestChain();
  const base = chainConfigOf(dev, { confirmations: 1, finalityConfirmations: FINALITY, pollIntervalMs: 1000 });
  const key = dev.payers[8]!.privateKey;
  const s = await startTestServer({
    backend,
    chains: [opts.settle ? { ...base, tokens: base.tokens.map((t) => (t.symbol === 'USDC' ? { ...t, eip3009: true } : t)) } : base],
    ...(opts.settle ? { config: { settlement: new SettlementSigner(key, privateKeyToAccount(key).address) } } : {}),
    role: 'api',
    http: { rateLimits: false },
  });
  const m = await setupMerchant(s);
  const r = await s.signed(m, 'PUT', `/api/v1/mpp/routes/${ROUTE}`, { body: { amount_wei: PRICE.toString(), chain_id: dev.chainId, token_symbol: 'USDC' } });
  if (r.status !== 200) throw new Error(`price route: ${r.status} ${r.text}`);
  const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!.address.toLowerCase() as Hex;
  return {
    dev,
    s,
    m,
    usdc,
    close: async () => {
      await s.close();
      await dev.stop();
    },
  };
}

export function challenge(st: MppStack, payer: string, request = ROUTE): Promise<TestResponse> {
  return st.s.request('POST', '/mpp/v1/challenge', { body: { merchant_id: st.m.merchantId, route_canonical: ROUTE, request_canonical: request, payer_addr: payer } });
}

export function verify(st: MppStack, body: { challenge_id: string; tx_hash: string; payer_addr: string; mac: string }): Promise<TestResponse> {
  return st.s.request('POST', '/mpp/v1/verify', { body });
}

/**
 * Sends a USDC transfer and, with automine on, waits until the node reports it mined: anvil mines
 * in the background after eth_sendRawTransaction returns, so a verify sent at once could rightly
 * answer pending_inclusion. With automine off (`mined: false`) it returns after sending.
 */
export async function pay(st: MppStack, i: number, to: string, amount = PRICE, mined = true): Promise<Hex> {
  const p = st.dev.payers[i]!;
  const hash = await transferToken({ rpcUrl: st.dev.rpcUrl, chainId: st.dev.chainId, privateKey: p.privateKey, token: st.usdc, to: to as Hex, amount });
  const deadline = Date.now() + 15_000;
  while (mined && !(await rpcRequest<unknown>(st.dev.rpcUrl, 'eth_getTransactionReceipt', [hash]))) {
    if (Date.now() > deadline) throw new Error(`payment ${hash} not mined in 15 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return hash;
}

/**
 * The payer proof a `hash` credential carries on an open challenge (`payload.signature`): the
 * payer's EIP-712 signature over { account, challengeId, realm } in the domain { name: "MPP",
 * version: "3", chainId }, written out here as docs/machine-payments.md tells a client to.
 */
export function signPayerProof(st: MppStack, payerIndex: number, challenge: { id: string; realm: string }): Promise<Hex> {
  const account = privateKeyToAccount(st.dev.payers[payerIndex]!.privateKey);
  return account.signTypedData({
    domain: { name: 'MPP', version: '3', chainId: st.dev.chainId },
    types: {
      Proof: [
        { name: 'account', type: 'address' },
        { name: 'challengeId', type: 'string' },
        { name: 'realm', type: 'string' },
      ],
    },
    primaryType: 'Proof',
    message: { account: account.address, challengeId: challenge.id, realm: challenge.realm },
  });
}

/** Mines blocks until a transfer mined now is final. */
export const finalize = (st: MppStack) => mine(st.dev.rpcUrl, FINALITY - 1);
