import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ChallengeReader } from '../../src/mpp/reads.ts';
import { getChallengesWithIndexed } from '../../src/mpp/repo.ts';
import { backends } from '../helpers/db.ts';
import { challenge, finalize, pay, PRICE, ROUTE, startMppStack, verify, type MppStack } from './mpp-fixtures.ts';
import { watcherFor } from './watcher-fixtures.ts';

/**
 * The verify's coalesced read (mpp/reads.ts): concurrent reads go in one statement, and each
 * answers exactly what reading it alone answers — its own challenge with the index's records of
 * its own transaction, undefined for an unknown challenge — whatever else shares the statement.
 */
for (const backend of backends()) {
  describe(`mpp coalesced challenge reads (${backend})`, () => {
    let st: MppStack;
    let payer: string;
    before(async () => {
      st = await startMppStack(backend);
      payer = st.dev.payers[0]!.address.toLowerCase();
    });
    after(() => st?.close());

    it('a batch of reads answers each as a read of its own; duplicates, unknown ids and unindexed transactions included', async () => {
      const a = (await challenge(st, payer, `${ROUTE}:ra`)).body;
      const b = (await challenge(st, payer, `${ROUTE}:rb`)).body;
      const txA = await pay(st, 0, a.recipient);
      const txB = await pay(st, 0, b.recipient, PRICE + 5n);
      await finalize(st);
      const watcher = watcherFor(st.s.db, st.s.tg.deps.config.chains[0]!);
      for (let i = 0; ; i++) {
        await watcher.tick();
        const { rows } = await st.s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM chain_transfers WHERE tx_hash = ANY($1)', [[txA, txB]]);
        if (rows[0]!.n === 2) break;
        assert.ok(i < 20, 'transfers not indexed after 20 ticks');
      }
      const unindexed = `0x${randomBytes(32).toString('hex')}`;
      const reqs = [
        { id: a.challenge_id, txHash: txA },
        { id: b.challenge_id, txHash: txB },
        { id: a.challenge_id, txHash: txB }, // the same challenge with another transaction
        { id: 'ch_unknown', txHash: txA },
        { id: b.challenge_id, txHash: unindexed },
        { id: a.challenge_id, txHash: txA }, // a duplicate of the first
      ];
      const reader = new ChallengeReader(st.s.db);
      const together = await Promise.all(reqs.map((r) => reader.read(r.id, r.txHash)));
      assert.ok(reader.stats().batches <= 2, `${reqs.length} concurrent reads in ${reader.stats().batches} statements`);
      const alone = [];
      for (const r of reqs) alone.push((await getChallengesWithIndexed(st.s.db, [r]))[0]);
      assert.deepEqual(together, alone);

      const amounts = together.map((r) => r?.idx_transfers.map((t) => t.amount));
      assert.deepEqual(amounts, [[PRICE.toString()], [(PRICE + 5n).toString()], [(PRICE + 5n).toString()], undefined, [], [PRICE.toString()]]);
      assert.deepEqual(
        together.map((r) => r?.id),
        [a.challenge_id, b.challenge_id, a.challenge_id, undefined, b.challenge_id, a.challenge_id],
      );
      assert.ok(together[0]!.idx_cursor !== null && Number(together[0]!.idx_cursor) >= Number(together[0]!.idx_transfers[0]!.block_number));
      assert.equal('req_ord' in together[0]!, false, 'the statement’s bookkeeping column does not leak into the row');

      // And through the route: concurrent first verifies of both, each paid by its own transfer.
      const [ra, rb] = await Promise.all([verify(st, { challenge_id: a.challenge_id, tx_hash: txA, payer_addr: payer, mac: a.mac }), verify(st, { challenge_id: b.challenge_id, tx_hash: txB, payer_addr: payer, mac: b.mac })]);
      assert.deepEqual([ra.status, ra.body.tx_hash, ra.body.amount_wei], [200, txA, PRICE.toString()], ra.text);
      assert.deepEqual([rb.status, rb.body.tx_hash, rb.body.amount_wei], [200, txB, (PRICE + 5n).toString()], rb.text);
    });
  });
}
