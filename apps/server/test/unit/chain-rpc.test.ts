import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LimitExceededRpcError, ResponseBodyTooLargeError, RpcRequestError, toEventSelector } from 'viem';
import { TRANSFER_TOPIC, addressTopic, backoffDelay, decodeTransferLog, describeError, isRangeError, redactUrls, withRetry } from '../../src/chain/evm/rpc.ts';
import { initialCursorBlock, nextRange } from '../../src/chain/evm/scan.ts';
import { rewindTarget } from '../../src/chain/evm/reorg.ts';
import { tickBackoff } from '../../src/chain/evm/watcher.ts';
import { mapLimit } from '../../src/chain/evm/context.ts';

describe('withRetry', () => {
  it('retries until success', async () => {
    let calls = 0;
    const v = await withRetry(
      async () => {
        if (++calls < 3) throw new Error('flaky');
        return 'ok';
      },
      { attempts: 3, baseMs: 1, maxMs: 2 },
    );
    assert.equal(v, 'ok');
    assert.equal(calls, 3);
  });

  it('rethrows the last error after `attempts`', async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          throw new Error(`fail ${++calls}`);
        },
        { attempts: 2, baseMs: 1, maxMs: 1 },
      ),
      /fail 2/,
    );
    assert.equal(calls, 2);
  });

  it('stops at once when shouldRetry says no', async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw new Error('query returned more than 10000 results');
        },
        { attempts: 5, baseMs: 1, maxMs: 1, shouldRetry: (e) => !isRangeError(e) },
      ),
    );
    assert.equal(calls, 1);
  });
});

describe('backoff', () => {
  it('full jitter stays under the doubling cap', () => {
    assert.equal(
      backoffDelay(0, 100, 1000, () => 0.999),
      99,
    );
    assert.equal(
      backoffDelay(3, 100, 1000, () => 0.999),
      799,
    );
    assert.equal(
      backoffDelay(10, 100, 1000, () => 0.999),
      999,
    );
    assert.equal(
      backoffDelay(10, 100, 1000, () => 0),
      0,
    );
  });

  it('tick backoff doubles the poll interval with equal jitter, capped at 30 s', () => {
    assert.equal(
      tickBackoff(1, 1000, () => 0),
      1000,
    );
    assert.equal(
      tickBackoff(1, 1000, () => 1),
      2000,
    );
    assert.equal(
      tickBackoff(30, 1000, () => 0),
      15_000,
    );
    assert.equal(
      tickBackoff(30, 1000, () => 1),
      30_000,
    );
  });
});

describe('isRangeError', () => {
  it("recognises the providers' phrasings and viem's body limit", () => {
    for (const m of [
      'query returned more than 10000 results',
      'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range',
      'eth_getLogs is limited to a 10,000 range',
      'exceed maximum block range: 5000',
      'block range is too wide',
    ])
      assert.ok(isRangeError(new Error(m)), m);
    assert.ok(isRangeError(new LimitExceededRpcError(new RpcRequestError({ body: {}, url: 'http://x', error: { code: -32005, message: 'query returned more than 10000 results' } }))));
    assert.ok(isRangeError(new ResponseBodyTooLargeError({ maxSize: 10, size: 11 } as never)));
    assert.ok(isRangeError({ status: 413, message: 'Payload Too Large' }));
  });

  it('does not take outages for range errors', () => {
    for (const m of ['fetch failed', 'The request took too long to respond.', 'HTTP request failed. Status: 502']) assert.ok(!isRangeError(new Error(m)), m);
  });
});

describe('describeError / redactUrls', () => {
  it('never shows an RPC URL (API keys live in them)', () => {
    const e = new Error('HTTP request failed.\n\nURL: https://mainnet.infura.io/v3/0123456789abcdef\nDetails: fetch failed');
    const d = describeError(e);
    assert.ok(!d.includes('infura') && !d.includes('0123456789abcdef'), d);
    assert.equal(redactUrls('see wss://node.example/key?x=1 now'), 'see <rpc-url> now');
  });

  it('describes a database error by its structure, never its values', () => {
    const e = Object.assign(new Error('duplicate key value violates unique constraint "payments_tx_key"'), {
      code: '23505',
      table: 'payments',
      constraint: 'payments_tx_key',
      detail: 'Key (tx_hash)=(0xdeadbeef) already exists.',
    });
    const d = describeError(e);
    assert.equal(d, 'database error sqlstate=23505 table=payments constraint=payments_tx_key');
    assert.ok(!d.includes('0xdeadbeef'), d);
  });
});

describe('transfer logs', () => {
  it('TRANSFER_TOPIC is the ERC-20 Transfer event selector', () => {
    assert.equal(TRANSFER_TOPIC, toEventSelector('Transfer(address,address,uint256)'));
  });

  const base = {
    address: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    topics: [TRANSFER_TOPIC, addressTopic('0x70997970C51812dc3A010C7d01b50e0d17dc79C8'), addressTopic('0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC')],
    data: `0x${2_500_000n.toString(16).padStart(64, '0')}`,
    transactionHash: '0x' + 'AB'.repeat(32),
    logIndex: '0x2',
    blockNumber: '0x10',
    blockHash: '0x' + 'CD'.repeat(32),
  };

  it('decodes a standard Transfer to lowercase fields', () => {
    assert.deepEqual(decodeTransferLog(base), {
      token: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      from: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      to: '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc',
      value: 2_500_000n,
      txHash: '0x' + 'ab'.repeat(32),
      logIndex: 2,
      blockNumber: 16n,
      blockHash: '0x' + 'cd'.repeat(32),
    });
  });

  it('skips removed, pending and non-standard logs', () => {
    assert.equal(decodeTransferLog({ ...base, removed: true }), undefined);
    assert.equal(decodeTransferLog({ ...base, blockHash: null }), undefined);
    assert.equal(decodeTransferLog({ ...base, topics: base.topics.slice(0, 1) }), undefined); // from/to not indexed
    assert.equal(decodeTransferLog({ ...base, data: '0x' }), undefined);
  });
});

describe('cursor arithmetic', () => {
  it('nextRange is inclusive and bounded by the head', () => {
    assert.deepEqual(nextRange(100n, 105n, 4), { from: 101n, to: 104n });
    assert.deepEqual(nextRange(104n, 105n, 4), { from: 105n, to: 105n });
    assert.equal(nextRange(105n, 105n, 4), undefined);
    assert.equal(nextRange(106n, 105n, 4), undefined);
  });

  it('a fresh cursor starts finality blocks back, or at startBlock', () => {
    assert.equal(initialCursorBlock(1000n, 64), 935n);
    assert.equal(initialCursorBlock(1000n, 64, 500n), 499n);
    assert.equal(initialCursorBlock(10n, 64), 0n);
    assert.equal(initialCursorBlock(10n, 2, 0n), 0n);
    assert.equal(initialCursorBlock(10n, 2, 50n), 10n);
  });

  it('a rewind goes finality + 1 blocks below the mismatch, never below 0', () => {
    assert.equal(rewindTarget(120n, 3), 116n);
    assert.equal(rewindTarget(2n, 3), 0n);
  });
});

describe('mapLimit', () => {
  it('keeps order and bounds concurrency', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapLimit([1, 2, 3, 4, 5, 6], 2, async (x) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
      return x * 10;
    });
    assert.deepEqual(out, [10, 20, 30, 40, 50, 60]);
    assert.equal(peak, 2);
  });
});
