import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, discoverWallets, ensureChain, sendTransfer, walletErrorMessage, type Eip1193Provider, type Wallet } from '../../src/lib/wallet.ts';

/** A fake EIP-1193 provider recording calls; `chain` changes on wallet_switchEthereumChain. */
function fakeProvider(opts: { chain?: number; account?: string; switchError?: unknown; hash?: string } = {}) {
  const calls: { method: string; params?: unknown }[] = [];
  let chain = opts.chain ?? 1;
  const provider: Eip1193Provider = {
    async request({ method, params }) {
      calls.push({ method, params });
      if (method === 'eth_requestAccounts') return [opts.account ?? '0xAbCdEf0000000000000000000000000000000001'];
      if (method === 'eth_chainId') return `0x${chain.toString(16)}`;
      if (method === 'wallet_switchEthereumChain') {
        if (opts.switchError) throw opts.switchError;
        chain = Number.parseInt((params as [{ chainId: string }])[0].chainId, 16);
        return null;
      }
      if (method === 'eth_sendTransaction') return opts.hash ?? '0x' + 'ab'.repeat(32);
      throw { code: 4200, message: 'unsupported' };
    },
  };
  return { provider, calls };
}

const announce = (t: EventTarget, uuid: string, name: string, provider: unknown, icon = 'data:image/svg+xml,<svg/>') => t.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: { info: { uuid, name, icon, rdns: `x.${name}` }, provider } }));

test('discoverWallets: EIP-6963 announcements, deduplicated by uuid, answering requestProvider', async () => {
  const target = new EventTarget();
  const a = fakeProvider().provider;
  // A wallet that answers eip6963:requestProvider, as the spec asks.
  target.addEventListener('eip6963:requestProvider', () => announce(target, 'u1', 'Alpha', a));
  const seen: Wallet[][] = [];
  const stop = discoverWallets(target, (w) => seen.push(w), 20);
  announce(target, 'u1', 'Alpha again', a);
  announce(target, 'u2', 'Beta', fakeProvider().provider, 'javascript:alert(1)');
  announce(target, 'u3', 'NoProvider', {});
  await new Promise((r) => setTimeout(r, 40));
  stop();
  const last = seen.at(-1)!;
  assert.deepEqual(
    last.map((w) => w.info.name),
    ['Alpha', 'Beta'],
  );
  assert.equal(last[1]!.info.icon, '', 'only data:image icons are kept');
});

test('discoverWallets: falls back to window.ethereum when nobody announces', async () => {
  const target = Object.assign(new EventTarget(), { ethereum: fakeProvider().provider });
  let got: Wallet[] = [];
  discoverWallets(target, (w) => (got = w), 10);
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(
    got.map((w) => w.info.name),
    ['Browser wallet'],
  );
  const none = new EventTarget();
  let empty: Wallet[] | undefined;
  discoverWallets(none, (w) => (empty = w), 10);
  await new Promise((r) => setTimeout(r, 30));
  assert.deepEqual(empty, []);
});

test('connect lowercases the first account; ensureChain switches only when needed', async () => {
  const f = fakeProvider({ chain: 1 });
  assert.equal(await connect(f.provider), '0xabcdef0000000000000000000000000000000001');
  await ensureChain(f.provider, 1);
  assert.ok(!f.calls.some((c) => c.method === 'wallet_switchEthereumChain'));
  await ensureChain(f.provider, 137);
  assert.deepEqual(f.calls.find((c) => c.method === 'wallet_switchEthereumChain')?.params, [{ chainId: '0x89' }]);
  const refused = fakeProvider({ chain: 1, switchError: { code: 4902, message: 'Unrecognized chain' } });
  await assert.rejects(ensureChain(refused.provider, 137), (e: unknown) => (e as { code: number }).code === 4902);
});

test('sendTransfer: eth_sendTransaction to the token with the transfer calldata', async () => {
  const f = fakeProvider();
  const hash = await sendTransfer(f.provider, { from: '0x' + '01'.repeat(20), tokenContract: '0x' + '02'.repeat(20), payTo: '0x' + '03'.repeat(20), amountWei: '1000000' });
  assert.equal(hash, '0x' + 'ab'.repeat(32));
  const [tx] = f.calls.find((c) => c.method === 'eth_sendTransaction')!.params as [Record<string, string>];
  assert.equal(tx!.to, '0x' + '02'.repeat(20));
  assert.equal(tx!.from, '0x' + '01'.repeat(20));
  assert.equal(tx!.value, '0x0');
  assert.equal(tx!.data, '0xa9059cbb' + '0'.repeat(24) + '03'.repeat(20) + '0'.repeat(59) + 'f4240');
  await assert.rejects(sendTransfer(fakeProvider({ hash: 'nope' }).provider, { from: '0x' + '01'.repeat(20), tokenContract: '0x' + '02'.repeat(20), payTo: '0x' + '03'.repeat(20), amountWei: '1' }));
});

test('walletErrorMessage: EIP-1193 codes in words', () => {
  assert.match(walletErrorMessage({ code: 4001, message: 'User rejected' }), /declined/);
  assert.match(walletErrorMessage({ code: 4902 }), /does not know this network/);
  assert.match(walletErrorMessage({ code: -32002 }), /already has a request/);
  assert.match(walletErrorMessage(new Error('boom')), /boom/);
  assert.match(walletErrorMessage(undefined), /reported an error/);
});
