// Pure Solana pieces: the Solana Pay transfer-request URL, reference keys, the decoder on a
// transaction with two transfers into one account (fee: the split is unknowable → ambiguous).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { getBase58Decoder, getBase58Encoder } from '@solana/kit';
import { attribute } from '../../src/chain/solana/attribution.ts';
import { decodeTransfers, type JsonTransaction } from '../../src/chain/solana/decode.ts';
import { solanaFamily } from '../../src/chain/solana/family.ts';
import { newReference, toDecimal, transferRequestUrl } from '../../src/chain/solana/pay-url.ts';
import { flowsOutsideLiveTerms } from '../../src/chain/registry.ts';

const WALLET = 'HsVzxKmRdXBQdPh8k17rkB16EuuQ1zpjDmSty5RX6CCs';
const MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

describe('Solana Pay transfer request', () => {
  it('names the wallet, an exact decimal amount, the mint and every reference; text is percent-encoded', () => {
    const ref = newReference();
    const url = transferRequestUrl({ recipient: WALLET, amount: 1_500_000n, decimals: 6, splToken: MINT, references: [ref], label: 'Acme Shop', message: 'Order #1' });
    assert.equal(url, `solana:${WALLET}?amount=1.5&spl-token=${MINT}&reference=${ref}&label=Acme%20Shop&message=Order%20%231`);
    const u = new URL(url);
    assert.equal(u.protocol, 'solana:');
    assert.equal(u.pathname, WALLET);
    assert.deepEqual(u.searchParams.getAll('reference'), [ref]);
    assert.equal(toDecimal(1n, 6), '0.000001');
    assert.equal(toDecimal(10_000_000n, 6), '10');
    assert.equal(toDecimal(123n, 0), '123');
  });

  it('references are 32-byte base58 keys, fresh each time', () => {
    const a = newReference();
    assert.equal(getBase58Encoder().encode(a).length, 32);
    assert.notEqual(a, newReference());
  });
});

describe('decodeTransfers', () => {
  const keys = ['Payer1111111111111111111111111111111111111', 'Src11111111111111111111111111111111111111111', 'Dst11111111111111111111111111111111111111111', MINT, 'Ref11111111111111111111111111111111111111111', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb'];
  const data = (amount: bigint) => {
    const b = new Uint8Array(10);
    b[0] = 12;
    new DataView(b.buffer).setBigUint64(1, amount, true);
    b[9] = 6;
    return getBase58Decoder().decode(b);
  };
  const tx = (dstPost: bigint, err: unknown = null): JsonTransaction => ({
    slot: 5n,
    blockTime: 1n,
    transaction: {
      message: {
        accountKeys: keys,
        instructions: [
          { programIdIndex: 5, accounts: [1, 3, 2, 0, 4], data: data(600n) },
          { programIdIndex: 5, accounts: [1, 3, 2, 0], data: data(400n) },
        ],
      },
    },
    meta: {
      err,
      preTokenBalances: [{ accountIndex: 2, mint: MINT, owner: WALLET, uiTokenAmount: { amount: '0' } }],
      postTokenBalances: [{ accountIndex: 2, mint: MINT, owner: WALLET, uiTokenAmount: { amount: String(dstPost) } }],
    },
  });

  it('two transfers into one account: each gets its amount when nothing was withheld, unknown when a fee was', () => {
    const clean = decodeTransfers('sig', tx(1000n));
    assert.deepEqual(
      clean.map((t) => [t.instructionIndex, t.amount, t.received, t.references]),
      [
        [0, 600n, 600n, [keys[4]]],
        [1, 400n, 400n, []],
      ],
    );
    const withFee = decodeTransfers('sig', tx(990n));
    assert.deepEqual(
      withFee.map((t) => t.received),
      [undefined, undefined],
    );
    const order = { orderId: 'ord_1', reference: keys[4]!, mint: MINT, payTo: keys[2]!, amount: 600n };
    assert.equal(attribute(withFee[0]!, (r) => (r === order.reference ? order : undefined)).kind, 'ambiguous');
    assert.equal(attribute(clean[0]!, (r) => (r === order.reference ? order : undefined)).kind, 'paid');
  });

  it('a failed transaction moved nothing', () => {
    assert.deepEqual(decodeTransfers('sig', tx(1000n, { InstructionError: [0, 'InsufficientFunds'] })), []);
  });
});

describe('order reference keys', () => {
  it('are derived from the order id and map back to it; foreign keys map to nothing', async () => {
    const { newId } = await import('@tollgate/protocol');
    const { referenceOf, orderIdOfReference } = await import('../../src/chain/solana/reference.ts');
    for (let i = 0; i < 50; i++) {
      const id = newId('ord');
      const ref = referenceOf(id);
      assert.equal(getBase58Encoder().encode(ref).length, 32);
      assert.equal(orderIdOfReference(ref), id);
    }
    assert.equal(orderIdOfReference(newReference()), undefined);
    assert.equal(orderIdOfReference('not base58 0OIl'), undefined);
    assert.throws(() => referenceOf('ord_short'));
  });
});

describe('live terms', () => {
  // orders/supersede.ts leaves out the flows the families declare; the unique index (migration
  // 0018) keys apart the flows its prefix rule names: the two must agree, or a Solana order could
  // be named as the blocker of an order it never clashed with.
  it("every Solana flow is declared outside live terms, and every declared flow matches 0018's rule", () => {
    const sql = readFileSync(new URL('../../src/db/migrations/0018_live_terms_solana.sql', import.meta.url), 'utf8');
    const prefix = /left\(flow, 4\) = '([A-Z_]{4})'/.exec(sql)?.[1];
    assert.equal(prefix, 'SOL_');
    const outside = flowsOutsideLiveTerms();
    for (const f of [solanaFamily.directFlow, ...(solanaFamily.failedAtExpiry ?? [])]) assert.ok(outside.includes(f), f);
    for (const f of outside) assert.ok(f.startsWith(prefix), f);
  });
});
