// The executor's three signers (signers/, docs/operations.md "Keys") in the real product: a
// `tollgate serve` process per mode, configured only through its environment — SETTLEMENT_KEY (raw),
// SETTLEMENT_KEYSTORE + a passphrase file (keystore written by `tollgate keys new`), and
// SETTLEMENT_SIGNER_URL + SETTLEMENT_SIGNER_ADDRESS (remote: anvil itself signs for its unlocked
// account over eth_signTransaction, behind credentials in the URL) — settles a DELEGATE order on
// anvil, signed by that mode. Then everything the operator and the world can see (the process's
// whole output at LOG_LEVEL=trace, /metrics, the admin API, error answers) is searched for the key,
// the passphrase and the URL's password. Start-up refusals (wrong passphrase, a remote signer that
// does not hold the address) name the cause, never the secret.
// Scrypt at geth's standard cost (~1.2 CPU s a derivation) runs for one keystore only: the file
// `tollgate keys new` writes, on the first backend. The other keystores carry light scrypt
// parameters, which the format allows and the gateway honours (it derives with the file's own n/r/p).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mine, startDevChain, transferToken, type DevChain } from '@tollgate/devchain';
import { signedHeaders } from '@tollgate/protocol';
import { createPublicClient, http, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { decryptKeystore, encryptKeystore } from '../../src/signers/keystore/index.ts';
import { backends, createScratchDatabase, dropScratchDatabase } from '../helpers/db.ts';
import { MERCHANT_WALLET } from '../helpers/orders.ts';
import { spawnTollgate, type TollgateProcess } from '../helpers/process.ts';
import { withSettlement } from '../helpers/settlement.ts';
import { freePort } from '../helpers/net.ts';

const ADMIN = 'tgadm_signers_test_0123456789abcdef';
const MASTER_KEY = 'cd'.repeat(32);
const PASSPHRASE = 'kestrel-Quartz-71-passphrase';
const URL_PASSWORD = 'sig-n3r-url-pa55word';
/** Scrypt at 1/256 of geth's standard N: a valid keystore that derives in milliseconds. */
const LIGHT_SCRYPT = { n: 1024, r: 8, p: 1 };

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'tg-signers-'));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs `tollgate <args>` to its end; its exit code and whole output. */
async function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const p = spawnTollgate(args, env);
  const code = p.child.exitCode ?? (await new Promise<number | null>((res) => p.child.once('exit', res)));
  return { code, out: p.output() };
}

for (const backend of backends()) {
  describe(`settlement signers in a tollgate process (${backend})`, () => {
    let dev: DevChain;
    let chainId: number;
    const scratch: string[] = [];
    before(async () => {
      dev = await startDevChain({ chainId: 61_000 + Math.floor(Math.random() * 1000) });
      chainId = dev.chainId;
    });
    after(async () => {
      for (const name of scratch) await dropScratchDatabase(name);
      await dev?.stop();
    });

    /** The environment of a gateway on its own database with a config file naming `contract`. */
    async function gatewayEnv(contract: Hex): Promise<Record<string, string>> {
      const dir = tmp();
      const usdc = dev.tokens.find((t) => t.symbol === 'USDC')!;
      const config = {
        environment: 'test',
        chains: [
          {
            chain_id: chainId,
            rpc_url: dev.rpcUrl,
            confirmations: 1,
            finality_confirmations: 2,
            poll_interval_ms: 100,
            tokens: [{ symbol: 'USDC', address: usdc.address, decimals: usdc.decimals, eip3009: true }],
            settlement_contract: contract,
          },
        ],
      };
      writeFileSync(join(dir, 'tollgate.json'), JSON.stringify(config));
      const env: Record<string, string> = { TOLLGATE_CONFIG: join(dir, 'tollgate.json'), MASTER_KEY, ADMIN_TOKEN: ADMIN, PORT: String(await freePort()), LOG_LEVEL: 'trace', DATA_DIR: join(dir, 'data') };
      if (backend === 'postgres') {
        const db = await createScratchDatabase();
        scratch.push(db.name);
        env.DATABASE_URL = db.url;
      }
      return env;
    }

    /**
     * Starts the gateway, settles one DELEGATE order through it, and returns everything it showed:
     * its output, /metrics, the admin API's chains, the order record and an error answer.
     */
    async function settleThrough(env: Record<string, string>, executor: Hex, payerIndex: number): Promise<string> {
      const p: TollgateProcess = spawnTollgate(['serve'], env);
      const seen: string[] = [];
      try {
        const base = (await p.waitFor(/listening on (http:\/\/\S+)/, 240_000))[1]!;
        const admin = async (method: string, path: string, body?: unknown) => {
          const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${ADMIN}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
          const text = await r.text();
          seen.push(text);
          return { status: r.status, body: text ? JSON.parse(text) : undefined };
        };
        const m = await admin('POST', '/admin/v1/merchants', { name: 'Signer Shop', receive_type: 'DELEGATE' });
        assert.equal(m.status, 201);
        const creds = { apiKey: m.body.api_key as string, apiSecret: m.body.api_secret as string };
        assert.equal((await admin('POST', `/admin/v1/merchants/${m.body.merchant_id}/wallets`, { chain_id: chainId, token_symbol: 'USDC', address: MERCHANT_WALLET })).status, 201);
        assert.equal((await admin('POST', `/admin/v1/merchants/${m.body.merchant_id}/fee-balance/top-ups`, { amount: '5.00' })).status, 200);
        const chains = await admin('GET', '/admin/v1/chains');
        assert.equal(chains.body[0].delegate.executor_address, executor);
        const signed = async (method: string, path: string, body?: Record<string, unknown>) => {
          const r = await fetch(base + path, { method, headers: { ...signedHeaders({ ...creds, ...(body ? { body } : {}) }), ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
          const text = await r.text();
          seen.push(text);
          return { status: r.status, body: JSON.parse(text) };
        };
        const payer = dev.payers[payerIndex]!;
        const amount = String(1_000_000 + payerIndex);
        const o = await signed('POST', '/api/v1/orders', { dapp_order_id: `sig-${payerIndex}`, chain_id: chainId, token_symbol: 'USDC', from_address: payer.address, amount_wei: amount });
        assert.equal(o.status, 402, JSON.stringify(o.body));
        assert.equal(o.body.flow, 'ERC20_3009');
        await transferToken({ rpcUrl: dev.rpcUrl, chainId, privateKey: payer.privateKey, token: dev.tokens[0]!.address, to: o.body.accepts[0].payTo, amount: BigInt(amount) });
        let rec: any;
        const end = Date.now() + 60_000;
        while (Date.now() < end) {
          rec = (await signed('GET', `/api/v1/orders/${o.body.order_id}`)).body;
          if (rec.status === 'INVOICED' || rec.status === 'FAILED') break;
          await mine(dev.rpcUrl, 1);
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal(rec.status, 'INVOICED', JSON.stringify(rec));
        // The settlement transaction was signed by this mode's key.
        const tx = await createPublicClient({ transport: http(dev.rpcUrl) }).getTransaction({ hash: rec.settlement_tx_hash });
        assert.equal(tx.from.toLowerCase(), executor.toLowerCase());
        // An error answer of the same area: a refund of an order that was settled.
        assert.equal((await admin('POST', `/admin/v1/orders/${o.body.order_id}/refund`, {})).status >= 400, true);
        seen.push(await (await fetch(`${base}/metrics`)).text());
        seen.push(await (await fetch(`${base}/openapi.json`)).text());
      } finally {
        await p.stop('SIGTERM');
      }
      const shown = [...seen, p.output()].join('\n');
      // The haystack is the real one: request and worker log lines of the process, and the executor's address it shows.
      assert.match(p.output(), /"msg":"incoming request"/);
      assert.match(p.output(), /"component":"chain-watcher"/);
      assert.ok(shown.toLowerCase().includes(executor.toLowerCase()));
      return shown;
    }

    function assertNothingOf(text: string, secrets: Record<string, string>): void {
      const lower = text.toLowerCase();
      for (const [what, v] of Object.entries(secrets)) assert.equal(lower.includes(v.toLowerCase()), false, `${what} appears in what the gateway showed`);
    }

    it('raw key (SETTLEMENT_KEY): settles, and the key appears nowhere', async () => {
      const key = dev.payers[4]!.privateKey;
      const { chain } = await withSettlement(dev, { chainId, name: 'T', rpcUrl: dev.rpcUrl, confirmations: 1, finalityConfirmations: 2, pollIntervalMs: 100, tokens: [] }, key);
      const env = { ...(await gatewayEnv(chain.settlementContract!)), SETTLEMENT_KEY: key };
      const shown = await settleThrough(env, privateKeyToAccount(key).address, 0);
      assertNothingOf(shown, { 'the key': key.slice(2) });
    });

    const standardCost = backend === backends()[0];
    it(`keystore (SETTLEMENT_KEYSTORE + passphrase file; ${standardCost ? "written by tollgate keys new at geth's standard scrypt cost" : 'light scrypt parameters'}): settles; the key and passphrase appear nowhere`, async () => {
      const dir = tmp();
      const passFile = join(dir, 'pass.txt');
      writeFileSync(passFile, `${PASSPHRASE}\n`, { mode: 0o600 });
      const ks = join(dir, 'executor.json');
      const { privateKey, address } = standardCost ? await keysNew(ks, passFile, dir) : lightKeystore(ks);

      // The executor needs gas: fund the new address from anvil's account 0.
      await fundEth(dev, address);
      const { chain } = await withSettlement(dev, { chainId, name: 'T', rpcUrl: dev.rpcUrl, confirmations: 1, finalityConfirmations: 2, pollIntervalMs: 100, tokens: [] }, privateKey);
      const base = await gatewayEnv(chain.settlementContract!);
      const shown = await settleThrough({ ...base, SETTLEMENT_KEYSTORE: ks, SETTLEMENT_KEYSTORE_PASSPHRASE_FILE: passFile }, address, 1);
      assertNothingOf(shown, { 'the key': privateKey.slice(2), 'the passphrase': PASSPHRASE });

      // A wrong passphrase: refused at start, naming the variable and the cause, not the passphrase
      // (the same key in a light keystore: the refusal does not depend on the scrypt cost).
      const light = join(dir, 'light.json');
      writeFileSync(light, JSON.stringify(encryptKeystore(privateKey, PASSPHRASE, LIGHT_SCRYPT)), { mode: 0o600 });
      writeFileSync(passFile, 'not-the-Passphrase-42\n');
      const wrong = await run(['serve'], { ...(await gatewayEnv(chain.settlementContract!)), SETTLEMENT_KEYSTORE: light, SETTLEMENT_KEYSTORE_PASSPHRASE_FILE: passFile });
      assert.equal(wrong.code, 78, wrong.out);
      assert.match(wrong.out, /SETTLEMENT_KEYSTORE.*wrong passphrase/);
      assertNothingOf(wrong.out, { 'the passphrase tried': 'not-the-Passphrase-42', 'the passphrase': PASSPHRASE, 'the key': privateKey.slice(2) });
    });

    /** `tollgate keys new` writes the keystore (geth's standard scrypt cost), never overwrites it, and needs a passphrase source. */
    async function keysNew(ks: string, passFile: string, dir: string): Promise<{ privateKey: Hex; address: Hex }> {
      const made = await run(['keys', 'new', '--keystore', ks, '--passphrase-file', passFile], {});
      assert.equal(made.code, 0, made.out);
      const address = made.out.trim() as Hex;
      assert.match(address, /^0x[0-9a-fA-F]{40}$/, 'prints only the address');
      assert.equal(statSync(ks).mode & 0o777, 0o600);
      const file = JSON.parse(readFileSync(ks, 'utf8'));
      assert.deepEqual([file.crypto.kdf, file.crypto.kdfparams.n, file.crypto.kdfparams.r, file.crypto.kdfparams.p], ['scrypt', 262_144, 8, 1], "geth's standard scrypt cost");
      const { privateKey } = decryptKeystore(file, PASSPHRASE);
      assert.equal(privateKeyToAccount(privateKey).address, address);
      assertNothingOf(made.out, { 'the key': privateKey.slice(2), 'the passphrase': PASSPHRASE });
      // Never overwritten.
      const again = await run(['keys', 'new', '--keystore', ks, '--passphrase-file', passFile], {});
      assert.equal(again.code, 1);
      assert.match(again.out, /exists: choose another file/);
      // No terminal and no file: refused, nothing written.
      const noTty = await run(['keys', 'new', '--keystore', join(dir, 'other.json')], {});
      assert.equal(noTty.code, 1);
      assert.match(noTty.out, /use --passphrase-file/);
      return { privateKey, address };
    }

    /** A new key in a keystore with light scrypt parameters, 0600 like the one `keys new` writes. */
    function lightKeystore(ks: string): { privateKey: Hex; address: Hex } {
      const privateKey = generatePrivateKey();
      const file = encryptKeystore(privateKey, PASSPHRASE, LIGHT_SCRYPT);
      assert.equal((file.crypto as { kdfparams: { n: number } }).kdfparams.n, LIGHT_SCRYPT.n);
      writeFileSync(ks, JSON.stringify(file), { mode: 0o600 });
      return { privateKey, address: privateKeyToAccount(privateKey).address };
    }

    it('remote signer (anvil signs for its unlocked account over JSON-RPC): settles; the URL password appears nowhere; a signer without the address is refused at start', async () => {
      const executor = dev.payers[6]!; // anvil account 7: anvil holds its key, Tollgate never sees it
      const { chain } = await withSettlement(dev, { chainId, name: 'T', rpcUrl: dev.rpcUrl, confirmations: 1, finalityConfirmations: 2, pollIntervalMs: 100, tokens: [] }, executor.privateKey);
      const url = new URL(dev.rpcUrl);
      url.username = 'tollgate';
      url.password = URL_PASSWORD;
      const remote = { SETTLEMENT_SIGNER_URL: url.href, SETTLEMENT_SIGNER_ADDRESS: executor.address };
      const shown = await settleThrough({ ...(await gatewayEnv(chain.settlementContract!)), ...remote }, executor.address, 2);
      assertNothingOf(shown, { 'the URL password': URL_PASSWORD, 'the key anvil holds': executor.privateKey.slice(2) });

      const stranger = privateKeyToAccount(`0x${'42'.repeat(32)}`).address;
      const refused = await run(['serve'], { ...(await gatewayEnv(chain.settlementContract!)), ...remote, SETTLEMENT_SIGNER_ADDRESS: stranger });
      assert.equal(refused.code, 1, refused.out);
      assert.match(refused.out, new RegExp(`settlement signer \\(remote\\): the remote signer at http://127\\.0\\.0\\.1:\\d+ does not hold ${stranger}`));
      assertNothingOf(refused.out, { 'the URL password': URL_PASSWORD });
    });
  });
}

/** Sends 1 ETH from anvil's account 0 (unlocked: anvil signs it). */
async function fundEth(dev: DevChain, to: Hex): Promise<void> {
  const res = await fetch(dev.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendTransaction', params: [{ from: dev.deployer.address, to, value: '0xde0b6b3a7640000' }] }),
  });
  const body = (await res.json()) as { result?: Hex; error?: unknown };
  assert.ok(body.result, JSON.stringify(body.error));
  await createPublicClient({ transport: http(dev.rpcUrl) }).waitForTransactionReceipt({ hash: body.result });
}
