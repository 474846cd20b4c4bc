// The remote signer (signers/remote/) against a real JSON-RPC signer: anvil signs for its unlocked
// accounts with eth_signTransaction, eth_signTypedData_v4 and eth_sign. Signatures are deterministic
// (RFC 6979), so each answer must be byte-for-byte what a local account with the same key signs.
// A proxy in front of anvil then makes the signer misbehave (another nonce, another key, an error,
// no answer): every such answer is refused, and no message carries the URL's credentials.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startDevChain, type DevChain } from '@tollgate/devchain';
import type { Hex, TransactionSerializableEIP1559 } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { RemoteSigner, RemoteSignerError } from '../../src/signers/remote/index.ts';

const PASSWORD = 'pr0xy-Pass-word';

/** JSON-RPC in front of anvil; `rewrite` may change a call before it is forwarded. */
async function startProxy(upstream: string, rewrite: (call: { method: string; params: unknown[] }) => void): Promise<{ url: string; auth: string[]; close(): Promise<void> }> {
  const auth: string[] = [];
  const server: Server = createServer((req, res) => {
    auth.push(req.headers.authorization ?? '');
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', async () => {
      const call = JSON.parse(body);
      rewrite(call);
      const up = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(await up.text());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://tollgate:${PASSWORD}@127.0.0.1:${(server.address() as AddressInfo).port}/`, auth, close: () => new Promise((r) => server.close(() => r())) };
}

function refusedWith(re: RegExp) {
  return (e: unknown) => {
    assert.ok(e instanceof RemoteSignerError, String(e));
    assert.match(e.message, re);
    assert.equal(e.message.includes(PASSWORD), false, e.message);
    return true;
  };
}

describe('remote signer over JSON-RPC (anvil signs for its unlocked accounts)', () => {
  let dev: DevChain;
  before(async () => {
    dev = await startDevChain();
  });
  after(async () => {
    await dev?.stop();
  });

  const tx = (nonce: number): TransactionSerializableEIP1559 => ({
    type: 'eip1559',
    chainId: dev.chainId,
    nonce,
    to: dev.tokens[0]!.address,
    data: '0xa9059cbb000000000000000000000000a0ee7a142d267c1f36714e4a8f75612f20a797200000000000000000000000000000000000000000000000000000000000000001',
    gas: 90_000n,
    maxFeePerGas: 3_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });

  it('eth_signTransaction, eth_signTypedData_v4 and eth_sign answer exactly what the key signs locally; check() finds the account', async () => {
    const who = dev.payers[3]!;
    const local = privateKeyToAccount(who.privateKey);
    const remote = new RemoteSigner({ url: dev.rpcUrl, address: who.address });
    await remote.check();
    const account = remote.account();
    assert.equal(account.address, local.address);
    for (const nonce of [0, 7, 1234]) assert.equal(await account.signTransaction(tx(nonce)), await local.signTransaction(tx(nonce)));
    const typed = {
      domain: { name: 'Tollgate', version: '1', chainId: dev.chainId, verifyingContract: dev.tokens[0]!.address },
      types: {
        Order: [
          { name: 'id', type: 'bytes32' },
          { name: 'amount', type: 'uint256' },
        ],
      },
      primaryType: 'Order' as const,
      message: { id: `0x${'ab'.repeat(32)}` as Hex, amount: 10n ** 30n },
    };
    assert.equal(await account.signTypedData(typed), await local.signTypedData(typed));
    assert.equal(await account.signMessage({ message: 'tollgate' }), await local.signMessage({ message: 'tollgate' }));
  });

  it('URL credentials travel as Basic auth and never in a message; a changed nonce, another key, an error or silence is refused', async () => {
    const who = dev.payers[3]!;
    let mode: 'nonce' | 'key' | 'pass' = 'pass';
    const proxy = await startProxy(dev.rpcUrl, (call) => {
      if (call.method !== 'eth_signTransaction') return;
      const t = call.params[0] as { nonce: string; from: string };
      if (mode === 'nonce') t.nonce = `0x${(Number(t.nonce) + 1).toString(16)}`;
      if (mode === 'key') t.from = dev.payers[4]!.address;
    });
    try {
      const remote = new RemoteSigner({ url: proxy.url, address: who.address });
      assert.equal(String(remote).includes(PASSWORD) || JSON.stringify(remote).includes(PASSWORD), false);
      assert.equal(await remote.account().signTransaction(tx(3)), await privateKeyToAccount(who.privateKey).signTransaction(tx(3)));
      assert.equal(proxy.auth.at(-1), `Basic ${Buffer.from(`tollgate:${PASSWORD}`).toString('base64')}`);
      mode = 'nonce';
      await assert.rejects(remote.account().signTransaction(tx(3)), refusedWith(/signed a transaction whose nonce differs from the request/));
      mode = 'key';
      await assert.rejects(remote.account().signTransaction(tx(3)), refusedWith(/signed the transaction with another key/));
      mode = 'pass';
      // An address anvil holds no key for: the signer's own error, named with the origin only.
      const stranger = new RemoteSigner({ url: proxy.url, address: privateKeyToAccount(`0x${'42'.repeat(32)}`).address });
      await assert.rejects(stranger.account().signTransaction(tx(0)), refusedWith(/^the remote signer at http:\/\/127\.0\.0\.1:\d+ refused eth_signTransaction: /));
      await assert.rejects(stranger.check(), refusedWith(/does not hold 0x/));
    } finally {
      await proxy.close();
    }
    // Nothing listens there any more.
    const gone = new RemoteSigner({ url: proxy.url, address: who.address, timeoutMs: 2_000 });
    await assert.rejects(gone.check(), refusedWith(/is unreachable \(eth_accounts\)/));
  });
});
