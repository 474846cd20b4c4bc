import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../helpers/db.ts';
import { challenge, finalize, pay, PRICE, ROUTE, startMppStack, verify, type MppStack } from './mpp-fixtures.ts';
import { watcherFor } from './watcher-fixtures.ts';

/**
 * Verify answered from the chain watcher's index (chain_transfers + cursor) instead of the node:
 * the transfers are indexed by a real watcher tick on anvil, then the node is STOPPED, so every
 * 200 below can only come from the index; a transaction the index cannot prove final falls back to
 * the node (503 while it is down). The atomic claim holds on this path too.
 */
for (const backend of backends()) {
  describe(`mpp verify from the watcher's index (${backend})`, () => {
    let st: MppStack;
    let payer: string;
    let chainStopped = false;
    before(async () => {
      st = await startMppStack(backend);
      payer = st.dev.payers[0]!.address.toLowerCase();
    });
    after(async () => {
      if (chainStopped) await st?.s.close();
      else await st?.close();
    });

    it('pays from the index with the node down; 50 concurrent verifies of one indexed tx → one receipt; not indexed → node (503 while down)', async () => {
      const watcher = watcherFor(st.s.db, st.s.tg.deps.config.chains[0]!);
      assert.equal((await watcher.tick()).kind, 'leader');
      // Indexed and final: one challenge paid by its own transfer; 50 challenges sharing one transfer.
      const single = (await challenge(st, payer, `${ROUTE}:i1`)).body;
      const singleTx = await pay(st, 0, single.recipient);
      const many = [];
      for (let i = 0; i < 50; i++) many.push((await challenge(st, payer, `${ROUTE}:m${i}`)).body);
      const sharedTx = await pay(st, 0, single.recipient);
      // Under-paid, indexed: the index cannot prove it, the node refuses it precisely.
      const under = (await challenge(st, payer, `${ROUTE}:u1`)).body;
      const underTx = await pay(st, 0, single.recipient, PRICE - 1n);
      // Indexed, then orphaned (as a rewind marks a block that left the chain): never used.
      const orph = (await challenge(st, payer, `${ROUTE}:o1`)).body;
      const orphTx = await pay(st, 0, single.recipient);
      await finalize(st);
      // Tick until the four transfers are indexed (a tick that sees the chain move stops early and retries).
      const txs = [singleTx, sharedTx, underTx, orphTx];
      for (let i = 0; ; i++) {
        await watcher.tick();
        const { rows } = await st.s.db.query<{ n: number }>('SELECT count(*)::int AS n FROM chain_transfers WHERE tx_hash = ANY($1)', [txs]);
        if (rows[0]!.n === 4) break;
        assert.ok(i < 20, `only ${rows[0]!.n} of 4 transfers indexed after 20 ticks`);
      }
      const refused = await verify(st, { challenge_id: under.challenge_id, tx_hash: underTx, payer_addr: payer, mac: under.mac });
      assert.deepEqual([refused.status, refused.body.code], [400, 'transfer_not_found'], refused.text);
      // A transfer not indexed (sent after the last tick) that the node would show as final.
      const late = (await challenge(st, payer, `${ROUTE}:l1`)).body;
      const lateTx = await pay(st, 0, late.recipient);
      await finalize(st);

      await st.s.db.query('UPDATE chain_transfers SET orphaned_at = now() WHERE tx_hash = $1', [orphTx]);

      await st.dev.stop();
      chainStopped = true;

      const ok = await verify(st, { challenge_id: single.challenge_id, tx_hash: singleTx, payer_addr: payer, mac: single.mac });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual([ok.body.tx_hash, ok.body.amount_wei, ok.body.payer], [singleTx, PRICE.toString(), payer]);
      const rs = await Promise.all(many.map((c) => verify(st, { challenge_id: c.challenge_id, tx_hash: sharedTx, payer_addr: payer, mac: c.mac })));
      const by = (n: number) => rs.filter((r) => r.status === n).length;
      assert.deepEqual([by(200), by(409)], [1, 49], JSON.stringify(rs.filter((r) => r.status !== 200 && r.status !== 409).map((r) => r.text)));
      const { rows } = await st.s.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM transfer_claims WHERE purpose = 'mpp_challenge' AND tx_ref = $1`, [sharedTx]);
      assert.equal(rows[0]!.n, 1);
      // The transaction that paid `single` cannot pay another challenge (409 from the index path too).
      const other = many.find((_c, i) => rs[i]!.status === 409)!;
      const replay = await verify(st, { challenge_id: other.challenge_id, tx_hash: singleTx, payer_addr: payer, mac: other.mac });
      assert.deepEqual([replay.status, replay.body.code], [409, 'tx_already_claimed']);
      // Not in the index: verify asks the node, which is down.
      const fallback = await verify(st, { challenge_id: late.challenge_id, tx_hash: lateTx, payer_addr: payer, mac: late.mac });
      assert.deepEqual([fallback.status, fallback.body.code], [503, 'service_unavailable'], fallback.text);
      const orphaned = await verify(st, { challenge_id: orph.challenge_id, tx_hash: orphTx, payer_addr: payer, mac: orph.mac });
      assert.deepEqual([orphaned.status, orphaned.body.code], [503, 'service_unavailable'], orphaned.text);
    });
  });
}
