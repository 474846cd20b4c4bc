import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { signedHeaders } from '@tollgate/protocol';
import { createKeyPairSignerFromBytes, type Address } from '@solana/kit';
import { payWithReference, rpcClient } from '@tollgate/svm';
import { TollgateClient } from '../../../../packages/sdk/src/index.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { freePort } from '../helpers/net.ts';

/**
 * What docs/solana.md "Paying locally" tells a newcomer: only dev.json and their own code — the
 * SDK creates a SOL_DIRECT order for the demo merchant, the dev file's payer (its keypair in the
 * Solana CLI's 64-byte format) pays the order's Solana Pay URL on the local SVM, and the order
 * becomes INVOICED.
 */
async function payLocalSolanaOrder(dev: any): Promise<void> {
  const sol = dev.solana;
  assert.match(sol.rpc_url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.deepEqual(
    sol.tokens.map((t: any) => [t.symbol, t.decimals]),
    [
      ['USDC', 6],
      ['USDT', 6],
    ],
  );
  assert.equal(sol.payer.keypair.length, 64);
  // createKeyPairSignerFromBytes checks that the public half belongs to the private half.
  const payer = await createKeyPairSignerFromBytes(Uint8Array.from(sol.payer.keypair));
  assert.equal(payer.address, sol.payer.address);
  const demo = dev.merchants.find((m: any) => m.merchant_id === 'demo');
  const sdk = new TollgateClient({ baseUrl: dev.base_url, apiKey: demo.api_key, apiSecret: demo.api_secret });
  const order = await sdk.createOrder({ dappOrderId: `dev-sol-${Date.now()}`, chainId: sol.chain_id, tokenSymbol: 'USDC', fromAddress: payer.address, amountWei: 500_000n });
  assert.equal(order.flow, 'SOL_DIRECT');
  const url = new URL(order.paymentUrl!);
  const usdc = sol.tokens.find((t: any) => t.symbol === 'USDC');
  assert.equal(url.searchParams.get('spl-token'), usdc.mint);
  await payWithReference(rpcClient(sol.rpc_url), {
    payer,
    recipient: url.pathname as Address,
    mint: usdc.mint,
    tokenProgram: usdc.program_id,
    decimals: usdc.decimals,
    amount: 500_000n,
    references: url.searchParams.getAll('reference') as Address[],
    createRecipientAccount: true,
  });
  // 400 ms slots, finalized 8 slots after processed: a few seconds.
  const final = await sdk.waitForOrder(order.orderId, { timeoutMs: 30_000, intervalMs: 200 });
  assert.equal(final.status, 'INVOICED');
}

/** Pids of the direct children of `ppid` whose command line names anvil (Linux /proc). */
function anvilChildren(ppid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === ppid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('anvil')) found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('dev profile (`npm start` without TOLLGATE_CONFIG)', () => {
  it('a SIGTERM while still starting (anvil up, database opening) stops the anvil child too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-dev-term-'));
    const p = spawnTollgate(['serve'], { DATA_DIR: dir, PORT: String(await freePort()), LOG_LEVEL: 'warn' });
    let anvil: number[] = [];
    try {
      const deadline = Date.now() + 30_000;
      while (anvil.length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
        anvil = anvilChildren(p.child.pid!);
      }
      assert.equal(anvil.length, 1, `anvil child not seen; output:\n${p.output()}`);
      const code = await p.stop('SIGTERM');
      assert.equal(code, 0, `exit signal ${p.child.signalCode}; output:\n${p.output()}`);
      const gone = Date.now() + 5_000;
      while (alive(anvil[0]!) && Date.now() < gone) await new Promise((r) => setTimeout(r, 50));
      assert.equal(alive(anvil[0]!), false, 'anvil outlived the gateway');
    } finally {
      await p.stop('SIGKILL');
      for (const pid of anvil) if (alive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts anvil + tokens + demo merchant, answers /healthz within 15 s, prints working credentials, stops on SIGINT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-dev-'));
    const port = await freePort();
    const started = Date.now();
    const p = spawnTollgate(['serve'], { DATA_DIR: dir, PORT: String(port), LOG_LEVEL: 'warn' });
    try {
      const out = await p.waitFor(/payer private key (0x[0-9a-f]{64})/, 15_000);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      assert.equal(health.status, 200);
      assert.ok(Date.now() - started < 15_000, 'healthz within 15 s');
      assert.ok(out[1]);
      const text = p.output();
      const apiKey = /demo API key\s+(\S+)/.exec(text)?.[1];
      const apiSecret = /demo API secret\s+(\S+)/.exec(text)?.[1];
      const admin = /admin token\s+(\S+)/.exec(text)?.[1];
      assert.ok(apiKey && apiSecret && admin, text);
      assert.match(text, /token USDC\s+0x[0-9a-fA-F]{40} \(6 decimals\)/);
      assert.match(text, /token USDT\s+0x[0-9a-fA-F]{40} \(6 decimals\)/);
      // The printed credentials really work.
      const me = await fetch(`http://127.0.0.1:${port}/api/v1/merchant`, { headers: signedHeaders({ apiKey, apiSecret }) });
      assert.equal(me.status, 200);
      const body = (await me.json()) as { merchant_id: string; wallets: { chain_id: number; token_symbol: string }[]; fee_balance: { available: string } };
      assert.equal(body.merchant_id, 'demo');
      // USDC and USDT on the local anvil chain and on the local SVM (docs/solana.md).
      assert.deepEqual(body.wallets.map((w) => `${w.chain_id}:${w.token_symbol}`).sort(), ['31337:USDC', '31337:USDT', '792703800:USDC', '792703800:USDT']);
      assert.equal(body.fee_balance.available, '100.00');
      const show = await fetch(`http://127.0.0.1:${port}/admin/v1/merchants/demo`, { headers: { authorization: `Bearer ${admin}` } });
      assert.equal(show.status, 200);
      // Secrets generated for the dev profile are private to the user.
      assert.equal(statSync(join(dir, 'master.key')).mode & 0o777, 0o600);
      assert.equal(statSync(join(dir, 'admin.token')).mode & 0o777, 0o600);
      const rpc = /chain\s+31337 at (http:\/\/\S+)/.exec(text)?.[1];
      assert.ok(rpc, text);

      // The dev profile file: everything above as JSON, private to the user (mode 0600).
      const devFile = join(dir, 'dev.json');
      assert.equal(statSync(devFile).mode & 0o777, 0o600);
      const dev = JSON.parse(readFileSync(devFile, 'utf8'));
      assert.equal(dev.base_url, `http://127.0.0.1:${port}`);
      assert.equal(dev.admin_token, admin);
      assert.deepEqual({ chain_id: dev.chain.chain_id, rpc_url: dev.chain.rpc_url }, { chain_id: 31337, rpc_url: rpc });
      assert.deepEqual(
        dev.tokens.map((t: any) => [t.symbol, t.decimals, t.eip3009]),
        [
          ['USDC', 6, true],
          ['USDT', 6, false],
        ],
      );
      assert.match(dev.payer.address, /^0x[0-9a-fA-F]{40}$/);
      assert.equal(dev.payer.private_key, out[1]);
      assert.deepEqual(
        dev.merchants.map((m: any) => [m.merchant_id, m.receive_type]),
        [
          ['demo', 'DIRECT'],
          ['demo-delegate', 'DELEGATE'],
        ],
      );
      assert.deepEqual([dev.merchants[0].api_key, dev.merchants[0].api_secret], [apiKey, apiSecret]);
      // The DELEGATE merchant's credentials work, and the example adapter is its registered callback.
      const d = dev.merchants[1];
      const dme = await fetch(`http://127.0.0.1:${port}/api/v1/merchant`, { headers: signedHeaders({ apiKey: d.api_key, apiSecret: d.api_secret }) });
      assert.equal(((await dme.json()) as { merchant_id: string }).merchant_id, 'demo-delegate');
      const cbs = (await (await fetch(`http://127.0.0.1:${port}/admin/v1/merchants/demo-delegate/callbacks`, { headers: { authorization: `Bearer ${admin}` } })).json()) as any;
      const list = Array.isArray(cbs) ? cbs : (cbs.data ?? cbs.callbacks);
      assert.equal(list.length, 1, JSON.stringify(cbs));
      assert.equal(list[0].callback_contract, d.callback_contract);
      assert.equal(list[0].core_address, dev.chain.settlement_contract);
      const chains = (await (await fetch(`http://127.0.0.1:${port}/admin/v1/chains`, { headers: { authorization: `Bearer ${admin}` } })).json()) as any;
      const c0 = (Array.isArray(chains) ? chains : (chains.data ?? chains.chains))[0];
      assert.equal(c0.delegate.enabled, true, JSON.stringify(chains));
      // The local SVM is listed too, and dev.json holds what a newcomer needs to pay a Solana order.
      const sol = chains.find((c: any) => c.kind === 'solana');
      assert.deepEqual([sol.chain_id, sol.network], [dev.solana.chain_id, dev.solana.network]);
      await payLocalSolanaOrder(dev);

      const code = await p.stop('SIGINT');
      assert.equal(code, 0, p.output());
      // anvil stopped with it
      await assert.rejects(fetch(rpc, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' }));
    } finally {
      // After a failure too, Ctrl-C first: anvil runs in its own process group and only the
      // gateway's shutdown stops it (a SIGKILL alone left it holding port 8545).
      await Promise.race([p.stop('SIGINT'), new Promise((r) => setTimeout(r, 10_000))]);
      await p.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
