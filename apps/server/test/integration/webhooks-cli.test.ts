import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyStandardWebhook, verifyWebhookSignature } from '@tollgate/protocol';
import { backends } from '../helpers/db.ts';
import { spawnTollgate, type TollgateProcess } from '../helpers/process.ts';
import { TEST_ADMIN_TOKEN, type Creds, type TestServer } from '../helpers/server.ts';
import { Receiver, startApiOnly } from './webhook-fixtures.ts';

/** `tollgate webhook|deliveries|trigger|listen` against a running Tollgate, as an operator uses them. */
for (const backend of backends()) {
  describe(`webhook CLI (${backend})`, () => {
    let s: TestServer;
    let m: Creds;
    let rx: Receiver;
    let env: Record<string, string>;
    const running: TollgateProcess[] = [];

    before(async () => {
      s = await startApiOnly(backend);
      m = await s.createMerchant();
      rx = await Receiver.start();
      env = { TOLLGATE_URL: s.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN };
    });
    after(async () => {
      await Promise.all(running.map((p) => p.stop('SIGKILL')));
      await rx.close();
      await s.close();
    });

    async function cli(...args: string[]): Promise<{ code: number | null; out: string }> {
      const p = spawnTollgate(args, env);
      const code = p.child.exitCode ?? (await new Promise<number | null>((r) => p.child.once('exit', r)));
      return { code, out: p.output() };
    }

    it('webhook create / list / disable / enable / rotate', async () => {
      const created = await cli('webhook', 'create', m.merchantId, '--url', rx.url, '--events', 'order.invoiced,order.cancelled', '--json');
      assert.equal(created.code, 0, created.out);
      const ep = JSON.parse(created.out);
      assert.match(ep.secret, /^whsec_/);
      const human = await cli('webhook', 'list', m.merchantId);
      assert.equal(human.code, 0);
      assert.match(human.out, new RegExp(ep.webhook_id));
      assert.doesNotMatch(human.out, /whsec_/);
      assert.match((await cli('webhook', 'disable', m.merchantId, ep.webhook_id)).out, /enabled: false/);
      assert.match((await cli('webhook', 'enable', m.merchantId, ep.webhook_id)).out, /enabled: true/);
      const rotated = await cli('webhook', 'rotate', m.merchantId, ep.webhook_id, '--overlap', '60');
      assert.match(rotated.out, /secret: whsec_/);
      assert.match(rotated.out, /shown only once/);
      const bad = await cli('webhook', 'create', m.merchantId, '--url', rx.url, '--events', 'order.paid');
      assert.equal(bad.code, 1);
      assert.match(bad.out, /unknown event order\.paid/);
    });

    it('trigger, deliveries list and redeliver', async () => {
      const t = await cli('trigger', 'order.invoiced', '--merchant', m.merchantId);
      assert.equal(t.code, 0, t.out);
      assert.match(t.out, /Triggered order\.invoiced \(evt_\w+, test data\): queued for 1 endpoint/);
      const list = await cli('deliveries', 'list', m.merchantId, '--event', 'order.invoiced', '--json');
      const ds = JSON.parse(list.out).deliveries;
      assert.equal(ds.length, 1);
      assert.equal(ds[0].status, 'pending');
      const re = await cli('deliveries', 'redeliver', m.merchantId, ds[0].delivery_id, '--json');
      assert.equal(JSON.parse(re.out).result, 'already_queued');
      const bulk = await cli('deliveries', 'redeliver', m.merchantId, '--since', '2020-01-01T00:00:00Z', '--json');
      assert.deepEqual(JSON.parse(bulk.out), { requeued: 0, redelivered: 0, more: false });
    });

    it('listen forwards live events to a local URL, signed with a session secret', async () => {
      const local = await Receiver.start();
      try {
        const p = spawnTollgate(['listen', '--merchant', m.merchantId, '--forward-to', local.url], env);
        running.push(p);
        const secret = (await p.waitFor(/signing secret for this session is (whsec_\S+)/))[1]!;
        assert.equal((await cli('trigger', 'order.cancelled', '--merchant', m.merchantId)).code, 0);
        const line = await p.waitFor(/order\.cancelled\s+(evt_\w+)\s+→ 200/);
        assert.equal(local.received.length, 1);
        const got = local.received[0]!;
        const envelope = JSON.parse(got.body);
        assert.equal(envelope.id, line[1]);
        assert.equal(envelope.event, 'order.cancelled');
        assert.equal(envelope.payload.test, true);
        assert.equal(got.headers['x-webhook-event'], 'order.cancelled');
        assert.ok(verifyWebhookSignature({ secret, rawBody: got.body, header: got.headers['x-webhook-signature'] as string }));
        assert.equal(verifyStandardWebhook({ secret, headers: got.headers, rawBody: got.body }).ok, true);
        assert.equal(rx.received.length, 0, 'listen needs no endpoint and the registered one got nothing (no dispatcher here)');
      } finally {
        await local.close();
      }
    });
  });
}
