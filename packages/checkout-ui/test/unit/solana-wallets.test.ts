import { test } from 'node:test';
import assert from 'node:assert/strict';
import { base58, fromBase64, connectSolana, discoverSolanaWallets, isPayingSolanaWallet, signAndSend, type SignAndSendInput, type SolanaWallet, type StandardAccount, type StandardWallet } from '../../src/lib/solana-wallets.ts';

const account = (address: string, chains = ['solana:localnet']): StandardAccount => ({
  address,
  publicKey: new Uint8Array(32),
  chains,
  features: ['solana:signAndSendTransaction'],
});

/** A wallet implementing the Wallet Standard shape, recording what it was asked to send. */
function standardWallet(name: string, opts: { accounts?: StandardAccount[]; signature?: Uint8Array; features?: string[] } = {}) {
  const sent: SignAndSendInput[] = [];
  const all: Record<string, unknown> = {
    'standard:connect': { version: '1.0.0', connect: async () => ({ accounts: opts.accounts ?? [account('Payer1111111111111111111111111111111111111')] }) },
    'solana:signAndSendTransaction': {
      version: '1.0.0',
      supportedTransactionVersions: ['legacy', 0],
      signAndSendTransaction: async (...inputs: SignAndSendInput[]) => (sent.push(...inputs), inputs.map(() => ({ signature: opts.signature ?? new Uint8Array(64).fill(7) }))),
    },
  };
  const features = Object.fromEntries(Object.entries(all).filter(([k]) => !opts.features || opts.features.includes(k)));
  const wallet: StandardWallet = { version: '1.0.0', name, icon: 'data:image/svg+xml,<svg/>', chains: ['solana:localnet', 'solana:mainnet'], features, accounts: [] };
  return { wallet, sent };
}

/** What a wallet does when it loads after the page: dispatch register-wallet with a callback. */
const registerLate = (t: EventTarget, w: unknown) => {
  let unregister: (() => void) | undefined;
  t.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: (api: { register(w: unknown): () => void }) => (unregister = api.register(w)) }));
  return () => unregister?.();
};

test('discoverSolanaWallets: wallets loaded before the page register on app-ready, later ones through register-wallet', () => {
  const target = new EventTarget();
  const early = standardWallet('Early');
  // A wallet already loaded listens for app-ready and registers itself on the API it carries.
  target.addEventListener('wallet-standard:app-ready', (e) => (e as CustomEvent).detail.register(early.wallet));
  const seen: SolanaWallet[][] = [];
  const stop = discoverSolanaWallets(target, (ws) => seen.push(ws));
  assert.deepEqual(
    seen.map((ws) => ws.map((w) => w.name)),
    [['Early']],
  );

  const late = standardWallet('Late');
  const unregister = registerLate(target, late.wallet);
  registerLate(target, late.wallet); // registered twice: listed once
  assert.deepEqual(
    seen.at(-1)!.map((w) => w.name),
    ['Early', 'Late'],
  );
  assert.equal(seen.length, 2);
  assert.equal(seen.at(-1)![1]!.icon, 'data:image/svg+xml,<svg/>');

  unregister();
  assert.deepEqual(
    seen.at(-1)!.map((w) => w.name),
    ['Early'],
  );

  stop();
  registerLate(target, standardWallet('After stop').wallet);
  assert.deepEqual(
    seen.at(-1)!.map((w) => w.name),
    ['Early'],
    'no registration after stop',
  );
});

test('discoverSolanaWallets: wallets that cannot pay on Solana, broken callbacks and foreign icons are left out', () => {
  const target = new EventTarget();
  const seen: SolanaWallet[][] = [];
  discoverSolanaWallets(target, (ws) => seen.push(ws));
  registerLate(target, standardWallet('No send', { features: ['standard:connect'] }).wallet);
  registerLate(target, { ...standardWallet('EVM only').wallet, chains: ['eip155:1'] });
  registerLate(target, null);
  target.dispatchEvent(
    new CustomEvent('wallet-standard:register-wallet', {
      detail: () => {
        throw new Error('broken wallet');
      },
    }),
  );
  target.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: 'not a callback' }));
  assert.equal(seen.length, 0, 'nothing offered');
  registerLate(target, { ...standardWallet('Remote icon').wallet, icon: 'https://evil.example/i.png', name: 'x'.repeat(100) });
  assert.equal(seen.length, 1);
  assert.equal(seen[0]![0]!.icon, '');
  assert.equal(seen[0]![0]!.name.length, 60);
});

test('isPayingSolanaWallet: needs a name, a solana chain, connect and signAndSendTransaction', () => {
  assert.equal(isPayingSolanaWallet(standardWallet('ok').wallet), true);
  assert.equal(isPayingSolanaWallet({ ...standardWallet('x').wallet, name: 1 }), false);
  assert.equal(isPayingSolanaWallet({ ...standardWallet('x').wallet, chains: 'solana:mainnet' }), false);
  assert.equal(isPayingSolanaWallet(standardWallet('x', { features: ['solana:signAndSendTransaction'] }).wallet), false);
  assert.equal(isPayingSolanaWallet(undefined), false);
});

test('connectSolana: the first account that can sign and send on the chain', async () => {
  const { wallet } = standardWallet('W', { accounts: [account('Main1', ['solana:mainnet']), account('Local1'), account('Local2')] });
  assert.equal((await connectSolana(wallet, 'solana:localnet')).address, 'Local1');
  assert.equal((await connectSolana(wallet, 'solana:mainnet')).address, 'Main1');
  await assert.rejects(connectSolana(wallet, 'solana:devnet'), (e: { code: number }) => e.code === 4100);
});

test('signAndSend: passes the transaction, account and chain; checks the 64-byte signature', async () => {
  const w = standardWallet('W', { signature: new Uint8Array(64).fill(9) });
  const a = account('Payer');
  const tx = new Uint8Array([1, 2, 3]);
  const sig = await signAndSend(w.wallet, { account: a, transaction: tx, chain: 'solana:localnet', options: { commitment: 'confirmed' } });
  assert.deepEqual(sig, new Uint8Array(64).fill(9));
  assert.equal(w.sent.length, 1);
  assert.equal(w.sent[0]!.transaction, tx);
  assert.equal(w.sent[0]!.chain, 'solana:localnet');
  assert.equal(w.sent[0]!.account, a);

  const bad = standardWallet('Bad', { signature: new Uint8Array(10) });
  await assert.rejects(signAndSend(bad.wallet, { account: a, transaction: tx, chain: 'solana:localnet' }), (e: { code: number }) => e.code === -32603);
  const none = standardWallet('None', { features: ['standard:connect'] });
  await assert.rejects(signAndSend(none.wallet, { account: a, transaction: tx, chain: 'solana:localnet' }), (e: { code: number }) => e.code === 4200);
});

test('base58 of signature bytes (leading zero bytes are 1s) and base64 decoding of a server transaction', async () => {
  // Cross-checked with the Base58 codec of @solana/kit (what the server and wallets use).
  const { getBase58Decoder } = await import('@solana/kit');
  const samples = [new Uint8Array(64).fill(255), Uint8Array.from({ length: 64 }, (_, i) => (i * 37) & 255), new Uint8Array([0, 0, 1, 2, 3]), new Uint8Array(32)];
  for (const b of samples) assert.equal(base58(b), getBase58Decoder().decode(b));
  assert.equal(base58(new Uint8Array([0, 0, 1])), '112');
  assert.deepEqual(fromBase64(Buffer.from([1, 2, 250, 0]).toString('base64')), new Uint8Array([1, 2, 250, 0]));
});
