// Child process of settlement-kill.test.ts: runs the executor up to one step, reports it on stdout
// and then waits to be killed with SIGKILL. Argument: one JSON object (test values only; the key
// is an anvil public test key).
import type { Hex } from 'viem';
import { SettlementSigner, type ChainConfig } from '../../src/config/schema.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { SettlementExecutor, type SettleRequest } from '../../src/settlement/executor.ts';

interface Args {
  databaseUrl: string;
  chain: ChainConfig;
  key: Hex;
  executor: Hex;
  order: Omit<SettleRequest, 'amount'> & { amount: string };
  /**
   * signed: stop before anything is recorded or sent (the simulation and fee reads done);
   * recorded: after the row is written; sent: after the broadcast, before marking it sent;
   * marked: after the row is marked sent, before any receipt is read.
   */
  step: 'signed' | 'recorded' | 'sent' | 'marked';
}

const a = JSON.parse(process.argv[2]!) as Args;
const db = await openPostgres(a.databaseUrl, { max: 1 });
const ex = new SettlementExecutor({ db, chain: a.chain, signer: new SettlementSigner(a.key, a.executor) });
if (a.step === 'signed') {
  // Everything a prepare reads before its insert; the kill lands before the row exists.
  await ex.client.estimateFeesPerGas();
  await ex.client.getTransactionCount({ address: a.executor, blockTag: 'pending' });
  console.log(`STEP signed 0x${'0'.repeat(64)}`);
} else {
  const p = await ex.prepare({ ...a.order, amount: BigInt(a.order.amount) });
  if (p.kind !== 'recorded') throw new Error(`unexpected ${p.kind}`);
  if (a.step === 'sent') await ex.client.sendRawTransaction({ serializedTransaction: p.record.rawTx });
  if (a.step === 'marked') await ex.broadcast(p.record);
  console.log(`STEP ${a.step} ${p.record.txHash}`);
}
setInterval(() => {}, 60_000); // wait for SIGKILL
