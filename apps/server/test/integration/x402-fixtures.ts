// Shared fixtures of the x402 facilitator tests: facilitator request bodies with an EIP-3009
// authorization signed by viem exactly as @x402/evm's exact client signs it (TransferWithAuthorization
// over the token's EIP-712 domain), with knobs to make each refusal.
import { randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

export interface X402BodyOptions {
  chainId: number;
  token: Hex;
  payTo: Hex;
  nowSeconds: number;
  /** Default: a fresh random key (an unfunded payer). */
  payerKey?: Hex;
  /** The price in the requirements (default 10_000 base units). */
  amount?: bigint;
  /** The authorized value (default: `amount`). */
  value?: bigint;
  /** The authorization's recipient (default: `payTo`). */
  to?: Hex;
  validAfter?: number;
  validBefore?: number;
  nonce?: Hex;
  /** EIP-712 domain the payer signs (default the TestToken USDC's: "USD Coin", "2"). */
  domain?: { name: string; version: string };
  /** Leave name/version out of the requirements' extra (the facilitator reads them from the token). */
  noExtra?: boolean;
}

export const USDC_DOMAIN = { name: 'USD Coin', version: '2' };

const TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

export async function x402Body(o: X402BodyOptions) {
  const account = privateKeyToAccount(o.payerKey ?? (`0x${randomBytes(32).toString('hex')}` as Hex));
  const amount = o.amount ?? 10_000n;
  const authorization = {
    from: account.address,
    to: o.to ?? o.payTo,
    value: (o.value ?? amount).toString(),
    validAfter: String(o.validAfter ?? 0),
    validBefore: String(o.validBefore ?? o.nowSeconds + 300),
    nonce: o.nonce ?? (`0x${randomBytes(32).toString('hex')}` as Hex),
  };
  const signature = await account.signTypedData({
    domain: { ...(o.domain ?? USDC_DOMAIN), chainId: o.chainId, verifyingContract: o.token },
    types: TYPES,
    primaryType: 'TransferWithAuthorization',
    message: { ...authorization, value: BigInt(authorization.value), validAfter: BigInt(authorization.validAfter), validBefore: BigInt(authorization.validBefore) },
  });
  const requirements = {
    scheme: 'exact',
    network: `eip155:${o.chainId}`,
    amount: amount.toString(),
    asset: o.token,
    payTo: o.payTo,
    maxTimeoutSeconds: 300,
    extra: o.noExtra ? {} : { ...USDC_DOMAIN },
  };
  return {
    x402Version: 2,
    paymentPayload: { x402Version: 2, resource: { url: 'http://127.0.0.1/paid' }, accepted: requirements, payload: { authorization, signature } },
    paymentRequirements: requirements,
  };
}

/**
 * A loopback JSON-RPC proxy in front of anvil that refuses eth_sendRawTransaction while `refuseSends`
 * is set: the executor records its transaction and cannot broadcast it (a process killed between
 * recording and sending leaves the same row).
 */
export async function startSendRefusingProxy(upstream: string) {
  const { createServer } = await import('node:http');
  const state = { refuseSends: true };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      void (async () => {
        const call = JSON.parse(raw) as { id?: unknown; method?: string };
        res.setHeader('content-type', 'application/json');
        if (state.refuseSends && call.method === 'eth_sendRawTransaction') {
          res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32603, message: 'test proxy: sends refused' } }));
          return;
        }
        const up = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
        res.end(await up.text());
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    state,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
