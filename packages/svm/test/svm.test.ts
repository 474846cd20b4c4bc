// The local SVM through the real RPC client (@solana/kit): commitment progression, pagination,
// token balances (classic and Token-2022 with a transfer fee), preflight errors, dropped and
// delayed transactions. Slots advance by hand (slotMs 0) so every assertion is deterministic.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { associatedTokenAddress, payWithReference, rpcClient, startLocalSvm, transferFeeOf, waitForSignature, LOCAL_CAIP2, type LocalSvm, type SolanaRpc } from '../src/index.ts';

const FEE = { basisPoints: 50, maximumFee: 2_000n };

describe('local SVM over JSON-RPC', () => {
  let svm: LocalSvm;
  let rpc: SolanaRpc;
  before(async () => {
    svm = await startLocalSvm({ slotMs: 0, confirmLag: 1, finalizeLag: 5, usdtTransferFee: FEE });
    rpc = rpcClient(svm.rpcUrl);
  });
  after(() => svm.stop());

  const token = (s: 'USDC' | 'USDT') => svm.tokens.find((t) => t.symbol === s)!;
  async function pay(symbol: 'USDC' | 'USDT', recipient: Address, amount: bigint, references: Address[] = [], payer = 0) {
    const t = token(symbol);
    return payWithReference(rpc, {
      payer: svm.payers[payer]!,
      recipient,
      mint: t.mint,
      tokenProgram: t.program,
      decimals: t.decimals,
      amount,
      references,
      createRecipientAccount: true,
    });
  }
  const fresh = async () => (await generateKeyPairSigner()).address;

  test('genesis hash is fixed and names the CAIP-2 id', async () => {
    const hash = await rpc.getGenesisHash().send();
    assert.equal(`solana:${hash.slice(0, 32)}`, LOCAL_CAIP2);
    assert.equal(await rpc.getHealth().send(), 'ok');
  });

  test('a transfer is processed, then confirmed, then finalized as slots pass', async () => {
    const merchant = await fresh();
    const sig = await pay('USDC', merchant, 1_000_000n);
    const status = async () => (await rpc.getSignatureStatuses([sig]).send()).value[0];
    assert.equal((await status())?.confirmationStatus, 'processed');
    // not yet visible to confirmed readers
    assert.equal(await rpc.getTransaction(sig, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send(), null);
    svm.ledger.advance(1);
    assert.equal((await status())?.confirmationStatus, 'confirmed');
    assert.equal((await status())?.confirmations, 1n);
    assert.ok(await rpc.getTransaction(sig, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send());
    assert.equal(await rpc.getTransaction(sig, { commitment: 'finalized', encoding: 'json', maxSupportedTransactionVersion: 0 }).send(), null);
    svm.ledger.advance(4);
    assert.equal((await status())?.confirmationStatus, 'finalized');
    assert.equal((await status())?.confirmations, null);
    const slot = (await status())!.slot;
    assert.ok((await rpc.getSlot({ commitment: 'finalized' }).send()) >= slot);
    assert.ok((await rpc.getSlot({ commitment: 'processed' }).send()) - (await rpc.getSlot({ commitment: 'finalized' }).send()) === 5n);
  });

  test('getTransaction reports token balances; Token-2022 credits the amount minus the transfer fee', async () => {
    const merchant = await fresh();
    const amount = 1_234_567n;
    const sig = await pay('USDT', merchant, amount);
    svm.ledger.advance(1);
    const tx = await rpc.getTransaction(sig, { commitment: 'confirmed', encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }).send();
    assert.ok(tx);
    const ata = await associatedTokenAddress(merchant, token('USDT').mint, token('USDT').program);
    const keys = tx.transaction.message.accountKeys.map((k) => k.pubkey);
    const idx = keys.indexOf(ata);
    assert.ok(idx >= 0);
    const post = tx.meta!.postTokenBalances!.find((b) => b.accountIndex === idx)!;
    assert.equal(
      tx.meta!.preTokenBalances!.find((b) => b.accountIndex === idx),
      undefined,
      'the account did not exist before',
    );
    const expected = amount - transferFeeOf(amount, FEE);
    assert.equal(post.uiTokenAmount.amount, expected.toString());
    assert.equal(post.owner, merchant);
    assert.equal(post.mint, token('USDT').mint);
    assert.equal(post.programId, token('USDT').program);
    const bal = await rpc.getTokenAccountBalance(ata, { commitment: 'confirmed' }).send();
    assert.equal(bal.value.amount, expected.toString());
    const parsed = await rpc.getAccountInfo(ata, { encoding: 'jsonParsed' }).send();
    const data = parsed.value!.data as unknown as { parsed: { type: string; info: { owner: string } } };
    assert.equal(data.parsed.type, 'account');
    assert.equal(data.parsed.info.owner, merchant);
  });

  test('getSignaturesForAddress pages newest first with before / until / limit', async () => {
    const reference = await fresh();
    const merchant = await fresh();
    const sigs: string[] = [];
    for (let i = 0; i < 5; i++) sigs.push(await pay('USDC', merchant, 1_000n + BigInt(i), [reference]));
    svm.ledger.advance(1);
    const all = await rpc.getSignaturesForAddress(reference, { commitment: 'confirmed' }).send();
    assert.deepEqual(
      all.map((s) => s.signature),
      [...sigs].reverse(),
    );
    const page1 = await rpc.getSignaturesForAddress(reference, { commitment: 'confirmed', limit: 2 }).send();
    const page2 = await rpc.getSignaturesForAddress(reference, { commitment: 'confirmed', limit: 2, before: page1[1]!.signature }).send();
    assert.deepEqual(
      [...page1, ...page2].map((s) => s.signature),
      [sigs[4], sigs[3], sigs[2], sigs[1]],
    );
    const since = await rpc.getSignaturesForAddress(reference, { commitment: 'confirmed', until: sigs[2] as never }).send();
    assert.deepEqual(
      since.map((s) => s.signature),
      [sigs[4], sigs[3]],
    );
    // finalized readers do not see them yet
    assert.equal((await rpc.getSignaturesForAddress(reference, { commitment: 'finalized' }).send()).length, 0);
    await assert.rejects(rpc.getSignaturesForAddress(reference, { commitment: 'processed' as never }).send(), /commitment/);
  });

  test('preflight rejects a transfer the payer cannot cover, nothing lands', async () => {
    const poor = await generateKeyPairSigner();
    await rpc.requestAirdrop(poor.address, 1_000_000_000n as never).send();
    await svm.fund(poor.address, 'USDC', 10n);
    const t = token('USDC');
    const merchant = await fresh();
    await assert.rejects(payWithReference(rpc, { payer: poor, recipient: merchant, mint: t.mint, tokenProgram: t.program, decimals: 6, amount: 11n, createRecipientAccount: true }), /simulation failed/i);
    const ata = await associatedTokenAddress(merchant, t.mint, t.program);
    assert.equal((await rpc.getAccountInfo(ata).send()).value, null);
  });

  test('a dropped transaction gets a signature and never a status; a delayed one lands later', async () => {
    const merchant = await fresh();
    await rpc.getSlot().send();
    svm.ledger.dropNext(1);
    const dropped = await pay('USDC', merchant, 777n);
    svm.ledger.advance(6);
    assert.equal((await rpc.getSignatureStatuses([dropped]).send()).value[0], null);
    svm.ledger.delayNext(150, 1);
    const delayed = await pay('USDC', merchant, 778n);
    assert.equal((await rpc.getSignatureStatuses([delayed]).send()).value[0], null);
    await new Promise((r) => setTimeout(r, 250));
    svm.ledger.advance(1);
    assert.equal((await rpc.getSignatureStatuses([delayed]).send()).value[0]?.confirmationStatus, 'confirmed');
  });

  test('waitForSignature follows a ticking chain; unknown methods answer -32601', async () => {
    const ticking = await startLocalSvm({ slotMs: 10, payers: 1 });
    try {
      const r = rpcClient(ticking.rpcUrl);
      const t = ticking.tokens[0]!;
      const sig = await payWithReference(r, { payer: ticking.payers[0]!, recipient: await fresh(), mint: t.mint, tokenProgram: t.program, decimals: 6, amount: 5n, createRecipientAccount: true });
      assert.ok((await waitForSignature(r, sig, 'finalized', 5_000)) > 0n);
      const res = await fetch(ticking.rpcUrl, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBlock', params: [1] }) });
      assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32601);
    } finally {
      await ticking.stop();
    }
  });

  test('a taken port rejects with EADDRINUSE and leaves no slot timer behind', async () => {
    // The ledger ticks on an unref'd interval: a leftover one would not keep the process alive, but
    // would advance a forgotten ledger forever in a process that retries on another port. Record
    // the intervals the failed start creates and clears.
    const created = new Set<unknown>();
    const { setInterval: set, clearInterval: clear } = globalThis;
    globalThis.setInterval = ((...a: Parameters<typeof set>) => {
      const t = set(...a);
      created.add(t);
      return t;
    }) as typeof set;
    globalThis.clearInterval = ((t: Parameters<typeof clear>[0]) => {
      created.delete(t);
      clear(t);
    }) as typeof clear;
    try {
      await assert.rejects(startLocalSvm({ slotMs: 10, payers: 1, port: Number(new URL(svm.rpcUrl).port) }), (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE');
    } finally {
      globalThis.setInterval = set;
      globalThis.clearInterval = clear;
    }
    assert.equal(created.size, 0, 'every interval of the failed start was cleared');
  });
});
