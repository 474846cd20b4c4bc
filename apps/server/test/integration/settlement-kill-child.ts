// Child process of settlement-kill.test.ts: runs the executor up to one step, reports it on stdout
// and then waits to be killed with SIGKILL. Argument: one JSON object (test values only; the key
// is an anvil public test key).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keccak256, type Hex } from 'viem';
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
   * bump-recorded / bump-sent (fee bumping; the parent turned automine off so the first
   * transaction stays unmined): the first attempt sent, then, once it is stuck, its replacement
   * recorded but not sent / sent but not marked sent. The replacement's eth_sendRawTransaction is
   * held by a loopback proxy in this process (not forwarded / forwarded but not answered).
   */
  step: 'signed' | 'recorded' | 'sent' | 'marked' | 'bump-recorded' | 'bump-sent';
}

const a = JSON.parse(process.argv[2]!) as Args;
const db = await openPostgres(a.databaseUrl, { max: 1 });
const ex = new SettlementExecutor({ db, chain: a.chain, signer: new SettlementSigner(a.key, a.executor) });
if (a.step === 'bump-recorded' || a.step === 'bump-sent') {
  let first: Hex | undefined;
  const proxy = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const call = JSON.parse(body) as { method?: string; params?: unknown[] };
      const forward = () => fetch(a.chain.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.text());
      if (call.method === 'eth_sendRawTransaction') {
        const hash = keccak256(call.params![0] as Hex);
        first ??= hash;
        if (hash !== first) {
          // The replacement: its row is recorded (the executor records before it sends).
          if (a.step === 'bump-recorded') return void console.log(`STEP ${a.step} ${hash}`);
          return void forward().then(() => console.log(`STEP ${a.step} ${hash}`));
        }
      }
      void forward().then((text) => res.writeHead(200, { 'content-type': 'application/json' }).end(text));
    });
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const bumping = new SettlementExecutor({ db, chain: { ...a.chain, rpcUrl: url, feeBump: { afterMs: 200, bumpPercent: 15, maxFeePerGas: 10n ** 12n } }, signer: new SettlementSigner(a.key, a.executor) });
  const p = await bumping.prepare({ ...a.order, amount: BigInt(a.order.amount) });
  if (p.kind !== 'recorded') throw new Error(`unexpected ${p.kind}`);
  await bumping.broadcast(p.record);
  await new Promise((r) => setTimeout(r, 300));
  void bumping.reconcile();
} else if (a.step === 'signed') {
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
