// The RPC policy's pure parts: which provider answers are outages, rate limits or the node's own
// answer (chain/evm/transport.ts), Retry-After, the range refusals of the major providers and the
// range they suggest (chain/evm/rpc.ts), and that a logged URL never carries its API key.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HttpRequestError, InternalRpcError, LimitExceededRpcError, RpcRequestError, TimeoutError } from 'viem';
import { isRangeError, rangeHint } from '../../src/chain/evm/rpc.ts';
import { classify, endpointLabel, parseRetryAfter } from '../../src/chain/evm/transport.ts';

const rpcError = (code: number, message: string) => new RpcRequestError({ body: {}, url: 'http://x', error: { code, message } });

// As the providers word them (their docs and observed answers); the proxy in @tollgate/devchain
// answers the same wording, so these and the integration tests speak of one thing.
const RANGE_REFUSALS: [provider: string, message: string, hint: number | undefined][] = [
  ['Infura (results)', 'query returned more than 10000 results. Try with this block range [0x3c1b0, 0x3c2a7].', 248],
  ['geth (results)', 'query returned more than 10000 results', undefined],
  [
    'Alchemy (results)',
    'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x10, 0x2f]',
    32,
  ],
  ['Alchemy (range)', 'You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x1, 0x1f4]', 500],
  ['QuickNode', 'eth_getLogs is limited to a 10,000 range', 10_000],
  ['geth / BSC', 'exceed maximum block range: 5000', 5000],
  ['Ankr', 'block range is too wide', undefined],
  ['generic', 'block range too large', undefined],
  ['Chainstack', 'Block range limit exceeded.', undefined],
];

describe('eth_getLogs refusals of the major providers', () => {
  for (const [provider, message, hint] of RANGE_REFUSALS) {
    it(`${provider}: a range error${hint ? ` naming ${hint} blocks` : ''}`, () => {
      const err = rpcError(-32005, message);
      assert.ok(isRangeError(err));
      assert.equal(rangeHint(err), hint);
      // The node meant it: no failover to another URL, the watcher shrinks the range.
      assert.equal(classify(err).kind, 'answer');
    });
  }
  it('an outage, a revert and a rate limit are not range errors', () => {
    for (const m of ['fetch failed', 'execution reverted', 'project ID request rate exceeded']) assert.equal(isRangeError(new Error(m)), false, m);
  });
});

describe('classify: whose trouble is it', () => {
  const http = (status: number, headers: Record<string, string> = {}) => new HttpRequestError({ url: 'http://x', status, headers: new Headers(headers) });
  it('HTTP 429 is a rate limit with its Retry-After', () => {
    assert.deepEqual(classify(http(429, { 'retry-after': '3' })), { kind: 'rate-limited', retryAfterMs: 3000 });
    assert.deepEqual(classify(http(429)), { kind: 'rate-limited', retryAfterMs: undefined });
  });
  it('JSON-RPC rate-limit errors (Infura -32005, Alchemy 429 body) are rate limits', () => {
    assert.equal(classify(rpcError(-32005, 'project ID request rate exceeded')).kind, 'rate-limited');
    assert.equal(classify(rpcError(429, 'Your app has exceeded its compute units per second capacity.')).kind, 'rate-limited');
    assert.equal(classify(rpcError(-32016, 'Too many requests, please slow down')).kind, 'rate-limited');
  });
  it('5xx, 401/403, timeouts and broken connections are outages of that URL', () => {
    for (const s of [500, 502, 503, 401, 403]) assert.equal(classify(http(s)).kind, 'down', String(s));
    assert.equal(classify(new TimeoutError({ body: {}, url: 'http://x' })).kind, 'down');
    assert.equal(classify(new TypeError('fetch failed')).kind, 'down');
  });
  it('as viem’s transport hands them over (typed RpcErrors around the RpcRequestError)', () => {
    assert.equal(classify(new LimitExceededRpcError(rpcError(-32005, 'query returned more than 10000 results'))).kind, 'answer');
    assert.equal(classify(new LimitExceededRpcError(rpcError(-32005, 'project ID request rate exceeded'))).kind, 'rate-limited');
    assert.equal(classify(new InternalRpcError(rpcError(-32603, 'internal error'))).kind, 'answer');
  });
  it('reverts, nonce errors and 413 are the node’s answer', () => {
    assert.equal(classify(rpcError(3, 'execution reverted')).kind, 'answer');
    assert.equal(classify(rpcError(-32000, 'nonce too low')).kind, 'answer');
    assert.equal(classify(http(413)).kind, 'answer');
  });
});

describe('Retry-After', () => {
  it('delay-seconds, an HTTP date, nonsense, and a cap of ten minutes', () => {
    const now = Date.parse('2026-11-27T18:00:00Z');
    assert.equal(parseRetryAfter('2', now), 2000);
    assert.equal(parseRetryAfter('Fri, 27 Nov 2026 18:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Fri, 27 Nov 2026 17:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
    assert.equal(parseRetryAfter('86400', now), 600_000);
  });
});

describe('endpointLabel', () => {
  it('keeps scheme and host only: API keys in paths and queries never reach a log', () => {
    assert.equal(endpointLabel('https://polygon-mainnet.infura.io/v3/0123456789abcdef', 0), '#1 https://polygon-mainnet.infura.io');
    assert.equal(endpointLabel('https://x.quiknode.pro/secret-token/?k=v', 1), '#2 https://x.quiknode.pro');
    assert.equal(endpointLabel('not a url', 2), '#3');
  });
});
