import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { newId } from '@tollgate/protocol';
import { ClaimWriter, type ClaimRequest } from '../../src/mpp/claims.ts';
import { isPgError, UNIQUE_VIOLATION } from '../../src/db/database.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import type { ReceiptClaims } from '../../src/mpp/receipts.ts';
import { claimTransfers, type ClaimOutcome } from '../../src/mpp/repo.ts';
import { mintDeliveryIds } from '../../src/webhooks/outbox.ts';
import { backends } from '../helpers/db.ts';
import { challenge, ROUTE, startMppStack, type MppStack } from './mpp-fixtures.ts';

/**
 * The verify's group commit of claims (mpp/claims.ts, repo.claimTransfers) against the database
 * alone: the transfers named here need not exist on a chain, the claim is a database fact. Every
 * batch must answer what claiming one at a time answers, write atomically, and write one
 * `mpp.payment.confirmed` event per claim it makes, in the same transaction.
 */
for (const backend of backends()) {
  describe(`mpp claim group commit (${backend})`, () => {
    let st: MppStack;
    let payer: string;
    let seq = 0;
    before(async () => {
      st = await startMppStack(backend);
      payer = st.dev.payers[0]!.address.toLowerCase();
    });
    after(() => st?.close());

    const open = async (): Promise<string> => {
      const r = await challenge(st, payer, `${ROUTE}:claims${++seq}`);
      assert.equal(r.status, 402, r.text);
      return r.body.challenge_id as string;
    };
    const tx = () => `0x${randomBytes(32).toString('hex')}`;
    /** A receipt-shaped JWS whose payload is the claims (nobody verifies it here). */
    const receiptOf = (claims: ReceiptClaims) => ['{"alg":"EdDSA"}', JSON.stringify(claims)].map((x) => Buffer.from(x).toString('base64url')).join('.') + '.sig';
    const input = (id: string, txHash: string, logIndex = 0): ClaimRequest => {
      const claims: ReceiptClaims = {
        challenge_id: id,
        merchant_id: st.m.merchantId,
        route_canonical: ROUTE,
        request_canonical: ROUTE,
        chain_id: st.dev.chainId,
        tx_hash: txHash,
        log_index: logIndex,
        amount_wei: '1000000',
        payer,
        recipient: payer,
        finality: 1,
        issued_at: 1,
      };
      return {
        merchantId: st.m.merchantId,
        claims,
        id,
        chainId: st.dev.chainId,
        txHash,
        logIndex,
        blockNumber: 7n,
        paidAmountWei: 1_000_000n,
        receiptJws: receiptOf(claims),
        paidAt: new Date(),
        token: `0x${'11'.repeat(20)}`,
        payer,
        recipient: payer,
        blockTime: new Date(),
      };
    };
    /** Claims one at a time: each claim its own batch, awaited before the next is submitted. */
    const oneByOne = async (cs: ClaimRequest[]): Promise<ClaimOutcome[]> => {
      const w = new ClaimWriter(st.s.db);
      const out: ClaimOutcome[] = [];
      for (const c of cs) out.push(await w.claim(c));
      assert.equal(w.stats().batches, cs.length);
      return out;
    };
    /** The challenge ids of the mpp.payment.confirmed events of these claims (same challenge, transfer and log). */
    const eventsFor = async (cs: ClaimRequest[]) => {
      const { rows } = await st.s.db.query<{ k: string }>(`SELECT (payload->>'challenge_id') || ' ' || (payload->>'tx_hash') || ' ' || (payload->>'log_index') AS k FROM webhook_events WHERE event = 'mpp.payment.confirmed'`);
      const have = new Set(rows.map((r) => r.k));
      return cs
        .filter((c) => have.has(`${c.id} ${c.txHash} ${c.logIndex}`))
        .map((c) => c.id)
        .sort();
    };
    const paidBy = async (id: string) => (await st.s.db.query<{ status: string; tx_hash: string | null; receipt_jws: string | null }>('SELECT status, tx_hash, receipt_jws FROM mpp_challenges WHERE id = $1', [id])).rows[0]!;

    /** One scenario of claims, built twice (fresh challenges and transfers) to compare batch and one-by-one. */
    async function scenario(): Promise<ClaimRequest[]> {
      const [a, b, c, d, e] = [await open(), await open(), await open(), await open(), await open()];
      const [t1, t2, t3, t4, t0] = [tx(), tx(), tx(), tx(), tx()];
      // d is already paid; t0 already pays another challenge.
      assert.deepEqual(await oneByOne([input(d, tx()), input(await open(), t0)]), ['claimed', 'claimed']);
      return [
        input(a, t1), // claimed
        input(b, t1), // the same transfer for another challenge: transfer_taken
        input(c, t2), // claimed
        input(c, t3), // the same challenge again with another transfer: not_open (already paid)
        input(d, t4), // already paid: not_open
        input(e, t0), // a transfer claimed before: transfer_taken
        input(e, t0, 1), // another log of that transaction: claimed
      ];
    }

    it('a batch answers each claim as claiming one at a time does, and writes the same rows and one event per payment', async () => {
      const first = await scenario();
      const sequential = await oneByOne(first);
      assert.deepEqual(await eventsFor(first), [first[0]!.id, first[2]!.id, first[6]!.id].sort());
      assert.deepEqual(sequential, ['claimed', 'transfer_taken', 'claimed', 'not_open', 'not_open', 'transfer_taken', 'claimed']);

      const items = await scenario();
      const w = new ClaimWriter(st.s.db);
      const batched = await Promise.all(items.map((c) => w.claim(c)));
      assert.deepEqual(batched, sequential);
      const stats = w.stats();
      assert.equal(stats.items, items.length);
      assert.ok(stats.batches < items.length, `claims went together (${stats.batches} batches for ${stats.items})`);
      // The rows: a paid by t1, c by t2 (not t3), e by log 1 of t0; b open; nothing claimed t3 or t4.
      assert.equal((await paidBy(items[0]!.id)).tx_hash, items[0]!.txHash);
      assert.equal((await paidBy(items[1]!.id)).status, 'OPEN');
      assert.equal((await paidBy(items[2]!.id)).tx_hash, items[2]!.txHash);
      assert.equal((await paidBy(items[2]!.id)).receipt_jws, items[2]!.receiptJws);
      const claimed = await st.s.db.query<{ tx_hash: string; log_index: number; challenge_id: string }>(
        `SELECT tx_ref AS tx_hash, log_index, purpose_id AS challenge_id FROM transfer_claims WHERE purpose = 'mpp_challenge' AND tx_ref = ANY($1::text[]) ORDER BY tx_ref, log_index`,
        [items.map((c) => c.txHash)],
      );
      const claimOf = (c: ClaimRequest) => claimed.rows.find((r) => r.tx_hash === c.txHash && r.log_index === c.logIndex)?.challenge_id;
      assert.equal(claimOf(items[0]!), items[0]!.id);
      assert.equal(claimOf(items[2]!), items[2]!.id);
      assert.equal(claimOf(items[3]!), undefined);
      assert.equal(claimOf(items[4]!), undefined);
      assert.equal(claimOf(items[6]!), items[6]!.id);
      assert.deepEqual(await eventsFor(items), [items[0]!.id, items[2]!.id, items[6]!.id].sort(), 'one event per claim made, none for the refused');
    });

    it('many concurrent first claims of distinct challenges: all claimed, in far fewer statements', async () => {
      const items = await Promise.all(Array.from({ length: 40 }, async () => input(await open(), tx())));
      const w = new ClaimWriter(st.s.db);
      const out = await Promise.all(items.map((c) => w.claim(c)));
      assert.deepEqual([...new Set(out)], ['claimed']);
      assert.ok(w.stats().batches <= 3, `40 claims in ${w.stats().batches} batches`);
      for (const c of items) assert.equal((await paidBy(c.id)).tx_hash, c.txHash);
      assert.deepEqual(await eventsFor(items), items.map((c) => c.id).sort());
    });

    it('a statement that cannot write one claim writes none (the writer runs the round again)', async () => {
      const [a, b] = [await open(), await open()];
      const t = tx();
      // Two claims of one transfer in one statement: the second insert violates the claim's key.
      // The writer never sends this (it keeps such a claim for after the batch); the statement
      // itself must abort whole, the challenge update with it.
      const withEvent = (c: ClaimRequest) => ({ ...c, event: { id: newId('evt'), payload: '{}' } });
      await assert.rejects(claimTransfers(st.s.db, [withEvent(input(a, t)), withEvent(input(b, t))], mintDeliveryIds(2)), (err) => isPgError(err, UNIQUE_VIOLATION));
      assert.equal((await paidBy(a)).status, 'OPEN');
      assert.equal((await paidBy(b)).status, 'OPEN');
    });

    it('two writers (two pools on Postgres) racing over the same challenges and transfers: at most one claim of each, no error', { skip: backend === 'pglite' ? 'one connection: no concurrent writer' : false }, async () => {
      const other = await openPostgres(st.s.database.url!, { max: 4 });
      try {
        const ids = await Promise.all(Array.from({ length: 20 }, () => open()));
        const txs = ids.map(() => tx());
        // Writer 1 claims challenge i with transfer i; writer 2 claims challenge i with transfer i
        // (same) for even i, and with transfer i+1 (another challenge's) for odd i.
        const w1 = new ClaimWriter(st.s.db);
        const w2 = new ClaimWriter(other);
        const [r1, r2] = await Promise.all([Promise.all(ids.map((id, i) => w1.claim(input(id, txs[i]!)))), Promise.all(ids.map((id, i) => w2.claim(input(id, txs[i % 2 === 0 ? i : (i + 1) % ids.length]!))))]);
        // Which writer wins a race decides which challenges get paid: when writer 2 pays challenge i
        // (odd) with transfer i+1 first, challenge i+1's transfer is taken and it stays OPEN — a
        // correct outcome. What must hold in every interleaving: no error (above), each challenge
        // claimed at most once and each transfer at most once, every `claimed` answer is the row
        // written, a challenge left OPEN was refused as `transfer_taken` by both writers, and one
        // event per payment.
        const offered = [ids.map((_, i) => txs[i]!), ids.map((_, i) => txs[i % 2 === 0 ? i : (i + 1) % ids.length]!)];
        let paid = 0;
        for (const [i, id] of ids.entries()) {
          const row = await paidBy(id);
          const winners = [r1[i], r2[i]].map((r, w) => (r === 'claimed' ? w : -1)).filter((w) => w >= 0);
          if (row.status === 'PAID') {
            paid++;
            assert.equal(winners.length, 1, `challenge ${i}: ${r1[i]} / ${r2[i]}`);
            assert.equal(row.tx_hash, offered[winners[0]!]![i], `challenge ${i} is paid by its winner's transfer`);
          } else {
            assert.equal(row.status, 'OPEN');
            assert.deepEqual([r1[i], r2[i]], ['transfer_taken', 'transfer_taken'], `challenge ${i} left open`);
          }
        }
        assert.ok(paid >= ids.length / 2, `${paid} of ${ids.length} paid: at least every other challenge has a transfer of its own`);
        const { rows } = await st.s.db.query<{ n: number; d: number; t: number }>(
          `SELECT count(*)::int AS n, count(DISTINCT purpose_id)::int AS d, count(DISTINCT tx_ref)::int AS t FROM transfer_claims WHERE purpose = 'mpp_challenge' AND tx_ref = ANY($1::text[])`,
          [txs],
        );
        assert.deepEqual(rows[0], { n: paid, d: paid, t: paid });
        const ev = await st.s.db.query<{ n: number; d: number }>(`SELECT count(*)::int AS n, count(DISTINCT payload->>'challenge_id')::int AS d FROM webhook_events WHERE event = 'mpp.payment.confirmed' AND payload->>'challenge_id' = ANY ($1::text[])`, [ids]);
        assert.deepEqual(ev.rows[0], { n: paid, d: paid }, 'one event per payment across both writers');
      } finally {
        await other.close();
      }
    });
  });
}
