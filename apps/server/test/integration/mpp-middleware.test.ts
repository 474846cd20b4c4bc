import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Credential, Method, Receipt, z } from 'mppx';
import { Mppx } from 'mppx/client';
import { serve as honoServe, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { mppReceipt, tollgateMpp, tollgateMppHono, type TollgateMppOptions } from '@tollgate/mpp';
import { verifyMppReceipt } from '../../../../packages/sdk/src/receipts.ts';
import { parseChallengeParams } from '../../src/mpp/payment/header.ts';
import { backends } from '../helpers/db.ts';
import { codeBlocks } from '../readme/readme-fixtures.ts';
import { freePort } from '../helpers/net.ts';
import { finalize, pay, PRICE, ROUTE, signPayerProof, startMppStack, type MppStack } from './mpp-fixtures.ts';

/**
 * `@tollgate/mpp` protecting real resource servers on loopback, in front of a real Tollgate on
 * anvil: a node:http server with the express-style middleware, the README's fastify example run as
 * written in a child process, and one behind a tampering proxy. Paid by the unmodified `mppx`
 * client (with the `hash` client method of mpp-payment-scheme.test.ts) and by plain fetch.
 */
const ROOT = join(import.meta.dirname, '../../../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

const listen = async (s: Server) => {
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};

for (const backend of backends()) {
  describe(`@tollgate/mpp middleware (${backend})`, () => {
    let st: MppStack;
    const servers: Server[] = [];
    let plainUrl: string;
    let tamperedUrl: string;
    let swappedUrl: string;
    const served: { payer: string; request: string }[] = [];

    /** A resource server using the express-style middleware on plain node:http; `gateway` may be a proxy. */
    async function resourceServer(gateway: string, o: Partial<TollgateMppOptions> = {}): Promise<string> {
      const guard = tollgateMpp({ gateway, merchantId: st.m.merchantId, route: ROUTE, ...o });
      const s = createServer((req, res) =>
        guard(req, res, (err) => {
          if (err) {
            res.writeHead(500).end();
            return;
          }
          const r = mppReceipt(req)!;
          served.push({ payer: r.claims.payer, request: r.claims.request_canonical });
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: 'the paid resource' }));
        }),
      );
      servers.push(s);
      return `${await listen(s)}/api/data`;
    }

    /**
     * A proxy in front of Tollgate that rewrites what passes: the JSON body sent to Tollgate and the
     * `Payment-Receipt` coming back (what a compromised network path or a gateway impostor could do).
     */
    async function proxyTo(receipt?: (outer: { receipt: string }) => void, body?: (b: Record<string, unknown>) => Record<string, unknown>): Promise<string> {
      const proxy = createServer(async (req: IncomingMessage, res) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
        let sent = chunks.length ? Buffer.concat(chunks) : undefined;
        if (sent && body) sent = Buffer.from(JSON.stringify(body(JSON.parse(sent.toString()))));
        const r = await fetch(`${st.s.url}${req.url}`, { method: req.method, headers, ...(sent ? { body: sent } : {}) });
        const out: Record<string, string> = {};
        r.headers.forEach((v, k) => {
          if (k !== 'content-length' && k !== 'content-encoding' && k !== 'transfer-encoding') out[k] = v;
        });
        if (out['payment-receipt'] && receipt) {
          const outer = JSON.parse(Buffer.from(out['payment-receipt'], 'base64url').toString());
          receipt(outer);
          out['payment-receipt'] = Buffer.from(JSON.stringify(outer)).toString('base64url');
        }
        res.writeHead(r.status, out).end(Buffer.from(await r.arrayBuffer()));
      });
      servers.push(proxy);
      return listen(proxy);
    }

    /** Multiplies the amount in the signed claims, keeping the signature. */
    function alterReceiptAmount(outer: { receipt: string }) {
      const [h, p, sig] = outer.receipt.split('.');
      const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
      claims.amount_wei = (BigInt(claims.amount_wei) * 10n).toString();
      outer.receipt = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
    }

    before(async () => {
      st = await startMppStack(backend);
      plainUrl = await resourceServer(st.s.url);
      tamperedUrl = await resourceServer(await proxyTo(alterReceiptAmount));
      swappedUrl = await resourceServer(await proxyTo(undefined, (b) => ({ ...b, request_canonical: `${ROUTE}:swapped` })));
    });
    after(async () => {
      for (const s of servers) await new Promise((ok) => s.close(ok));
      await st?.close();
    });

    /** mppx's client method for Tollgate's `evm` charge with `hash` credentials (as in mpp-payment-scheme.test.ts). */
    function hashCharge(payerIndex: number) {
      const p = st.dev.payers[payerIndex]!;
      const method = Method.from({
        name: 'evm',
        intent: 'charge',
        schema: {
          credential: { payload: z.object({ type: z.literal('hash'), hash: z.string(), signature: z.string() }) },
          request: z.object({ amount: z.string(), currency: z.string(), recipient: z.string(), methodDetails: z.object({ chainId: z.number() }) }),
        },
      });
      return Method.toClient(method, {
        async createCredential({ challenge }) {
          const req = challenge.request as { amount: string; recipient: string; methodDetails: { chainId: number } };
          const hash = await pay(st, payerIndex, req.recipient, BigInt(req.amount));
          await finalize(st);
          // The middleware binds no payer here (no payer option): the challenge is open and wants the payer's proof.
          const signature = await signPayerProof(st, payerIndex, challenge);
          return Credential.serialize({ challenge, payload: { type: 'hash', hash, signature }, source: `did:pkh:eip155:${req.methodDetails.chainId}:${p.address}` });
        },
      });
    }

    /** Plain fetch: read the challenge, transfer, and present the transaction hash with the payer's proof as a `hash` credential. */
    async function payByHand(url: string, payerIndex: number, txHash?: string, final = true) {
      const first = await fetch(url);
      assert.equal(first.status, 402);
      const www = first.headers.get('www-authenticate')!;
      const params = parseChallengeParams(www);
      const request = JSON.parse(Buffer.from(params.request!, 'base64url').toString());
      assert.equal(request.amount, PRICE.toString());
      const hash = txHash ?? (await pay(st, payerIndex, request.recipient));
      if (!txHash && final) await finalize(st);
      const challenge = { id: params.id, realm: params.realm, method: params.method, intent: params.intent, request: params.request, expires: params.expires };
      const signature = await signPayerProof(st, payerIndex, { id: params.id!, realm: params.realm! });
      const credential = Buffer.from(JSON.stringify({ challenge, payload: { type: 'hash', hash, signature }, source: `did:pkh:eip155:${st.dev.chainId}:${st.dev.payers[payerIndex]!.address}` })).toString('base64url');
      const authorization = `Payment ${credential}`;
      return { hash, authorization, res: await fetch(url, { headers: { authorization } }) };
    }

    it('402 with a Payment challenge before paying; the handler does not run', async () => {
      const n = served.length;
      const r = await fetch(plainUrl);
      assert.equal(r.status, 402);
      assert.match(r.headers.get('www-authenticate')!, /^Payment id="ch_[^"]+", realm=/);
      const body = await r.json();
      assert.match(body.challenge_id, /^ch_/);
      assert.equal(body.amount_wei, PRICE.toString());
      assert.equal(served.length, n);
    });

    it('the unmodified mppx client pays the node:http (express-style) route: 200 + Payment-Receipt', async () => {
      const mppx = Mppx.create({ methods: [hashCharge(0)], polyfill: false });
      const res = await mppx.fetch(plainUrl);
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(await res.json(), { data: 'the paid resource' });
      const receipt = Receipt.fromResponse(res);
      assert.equal(receipt.status, 'success');
      const v = verifyMppReceipt((receipt as unknown as { receipt: string }).receipt, (await st.s.request('GET', '/.well-known/jwks.json')).body);
      assert.ok(v.ok);
      assert.equal(v.claims.tx_hash, receipt.reference);
      assert.deepEqual(served.at(-1), { payer: st.dev.payers[0]!.address.toLowerCase(), request: ROUTE });
    });

    it('plain fetch + tx hash: 200 + Payment-Receipt; the same credential again and the same tx for a new challenge are refused', async () => {
      const { hash, authorization, res } = await payByHand(plainUrl, 1);
      assert.equal(res.status, 200, await res.clone().text());
      const outer = JSON.parse(Buffer.from(res.headers.get('payment-receipt')!, 'base64url').toString());
      assert.equal(outer.reference, hash);
      const n = served.length;
      // The exact credential replayed: the gateway's verify is idempotent, the middleware is not.
      const again = await fetch(plainUrl, { headers: { authorization } });
      assert.equal(again.status, 402);
      assert.equal((await again.json()).code, 'credential_already_used');
      // The transaction presented for a fresh challenge: the gateway refuses (one claim per transfer).
      const replay = await payByHand(plainUrl, 1, hash);
      assert.equal(replay.res.status, 402);
      assert.equal((await replay.res.json()).code, 'tx_already_claimed');
      // Another instance (no shared claimOnce memory) refuses it too once the receipt is older than
      // maxReceiptAgeSeconds: Tollgate hands back the receipt it signed the first time.
      await new Promise((r) => setTimeout(r, 1100));
      const other = await fetch(await resourceServer(st.s.url, { maxReceiptAgeSeconds: 0 }), { headers: { authorization } });
      assert.equal(other.status, 402);
      assert.equal((await other.json()).code, 'credential_already_used');
      assert.equal(served.length, n);
    });

    it('a receipt altered on the way from the gateway is refused by the local verification (502, handler not run)', async () => {
      const n = served.length;
      const { res } = await payByHand(tamperedUrl, 2);
      assert.equal(res.status, 502);
      const body = await res.json();
      assert.equal(body.code, 'receipt_invalid');
      assert.match(body.error, /bad_signature/);
      assert.equal(res.headers.get('payment-receipt'), null);
      assert.equal(served.length, n);
    });

    it('a genuine receipt for another request (the request name swapped on the way to Tollgate) is refused by the claim check', async () => {
      const n = served.length;
      const { res } = await payByHand(swappedUrl, 8);
      assert.equal(res.status, 502);
      const body = await res.json();
      assert.equal(body.code, 'receipt_invalid');
      assert.match(body.error, /another merchant, route, request or payer/);
      assert.equal(served.length, n);
    });

    it('after a receipt-key rotation the cached JWKS is refreshed for the new kid: the next payment is served', async () => {
      // The plain server has cached the JWKS while serving the earlier tests.
      const rot = await st.s.admin('POST', '/admin/v1/mpp/receipt-keys');
      assert.equal(rot.status, 201);
      const { res } = await payByHand(plainUrl, 6);
      assert.equal(res.status, 200, await res.clone().text());
      const outer = JSON.parse(Buffer.from(res.headers.get('payment-receipt')!, 'base64url').toString());
      assert.equal(JSON.parse(Buffer.from(outer.receipt.split('.')[0], 'base64url').toString()).kid, rot.body.kid);
    });

    it('request(req) binds each challenge to one concrete request: a credential paid for ?item=a is refused on ?item=b', async () => {
      const base = await resourceServer(st.s.url, { request: (r) => `${ROUTE}:${new URL(r.url, 'http://h').searchParams.get('item') ?? 'none'}` });
      const { res, authorization } = await payByHand(`${base}?item=a`, 7);
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(served.at(-1), { payer: st.dev.payers[7]!.address.toLowerCase(), request: `${ROUTE}:a` });
      const n = served.length;
      const other = await fetch(`${base}?item=b`, { headers: { authorization } });
      assert.equal(other.status, 402);
      assert.equal((await other.json()).code, 'invalid_request');
      assert.equal(served.length, n);
    });

    it('a transfer not final yet: 503 + Retry-After (payment_pending) without waiting; the same credential once final → 200', async () => {
      const url = await resourceServer(st.s.url, { pendingWaitMs: 0 });
      const { authorization, res } = await payByHand(url, 4, undefined, false);
      assert.equal(res.status, 503);
      assert.equal((await res.json()).code, 'payment_pending');
      assert.match(res.headers.get('retry-after')!, /^[1-9]\d*$/);
      await finalize(st);
      const done = await fetch(url, { headers: { authorization } });
      assert.equal(done.status, 200, await done.clone().text());
      assert.ok(done.headers.get('payment-receipt'));
    });

    it('with the default wait, the middleware holds the request until the transfer is final, then serves it', async () => {
      const url = await resourceServer(st.s.url);
      const later = setTimeout(() => void finalize(st), 300);
      const t0 = Date.now();
      const { res } = await payByHand(url, 5, undefined, false);
      clearTimeout(later);
      assert.equal(res.status, 200, await res.clone().text());
      assert.ok(Date.now() - t0 >= 300);
    });

    it('an unreachable gateway → 503 service_unavailable; an unpriced route → 502 gateway_error (never the resource)', async () => {
      const closed = createServer();
      const deadUrl = await listen(closed);
      await new Promise((ok) => closed.close(ok));
      const n = served.length;
      const down = await fetch(await resourceServer(deadUrl));
      assert.equal(down.status, 503);
      assert.equal((await down.json()).code, 'service_unavailable');
      const unpriced = await fetch(await resourceServer(st.s.url, { route: 'GET:api:other' }));
      assert.equal(unpriced.status, 502);
      const body = await unpriced.json();
      assert.equal(body.code, 'gateway_error');
      assert.match(body.error, /route_not_priced/);
      assert.equal(served.length, n);
    });

    it('the Hono middleware (real hono on @hono/node-server): 402 challenge, then the paid request is served with its receipt', async () => {
      const app = new Hono();
      const seen: string[] = [];
      app.get('/api/data', tollgateMppHono({ gateway: st.s.url, merchantId: st.m.merchantId, route: ROUTE }), (c) => {
        seen.push(mppReceipt(c.req.raw)!.claims.payer);
        return c.json({ data: 'the paid resource' });
      });
      const server: ServerType = await new Promise((ok) => {
        const s = honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ok(s));
      });
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/data`;
        const first = await fetch(url);
        assert.equal(first.status, 402);
        assert.match(first.headers.get('www-authenticate')!, /^Payment id="ch_/);
        assert.deepEqual(seen, []);
        const { res, authorization } = await payByHand(url, 0);
        assert.equal(res.status, 200, await res.clone().text());
        assert.deepEqual(await res.json(), { data: 'the paid resource' });
        assert.ok(res.headers.get('payment-receipt'));
        assert.deepEqual(seen, [st.dev.payers[0]!.address.toLowerCase()]);
        const again = await fetch(url, { headers: { authorization } });
        assert.equal(again.status, 402);
        assert.equal((await again.json()).code, 'credential_already_used');
        assert.equal(seen.length, 1);
      } finally {
        await new Promise((ok) => server.close(ok));
      }
    });

    it("the README's fastify example, run as written, protects its route and mppx pays it", async () => {
      const block = codeBlocks(README, 'Machine payments').find((b) => b.lang === 'ts' && b.code.includes('@tollgate/mpp'));
      assert.ok(block, 'README Machine payments section has the @tollgate/mpp example');
      const port = await freePort();
      const dir = mkdtempSync(join(ROOT, '.readme-mpp-'));
      let child: ChildProcess | undefined;
      try {
        writeFileSync(join(dir, 'server.ts'), block.code.replace('port: 3000', `port: ${port}`));
        child = spawn(process.execPath, [join(dir, 'server.ts')], {
          cwd: ROOT,
          env: { ...process.env, NODE_OPTIONS: '', TOLLGATE_URL: st.s.url, MERCHANT_ID: st.m.merchantId },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout!.on('data', (d) => (out += d));
        child.stderr!.on('data', (d) => (out += d));
        const url = `http://127.0.0.1:${port}/api/data`;
        let first: Response | undefined;
        for (let i = 0; i < 150 && !first; i++) {
          first = await fetch(url).catch(() => undefined);
          if (!first) await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(first, `the README server did not start:\n${out}`);
        assert.equal(first.status, 402);
        const mppx = Mppx.create({ methods: [hashCharge(3)], polyfill: false });
        const res = await mppx.fetch(url);
        assert.equal(res.status, 200, await res.clone().text());
        assert.deepEqual(await res.json(), { data: 'the paid resource', payer: st.dev.payers[3]!.address.toLowerCase() });
        assert.equal(Receipt.fromResponse(res).status, 'success');
      } finally {
        child?.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
