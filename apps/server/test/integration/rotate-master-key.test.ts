import assert from 'node:assert/strict';
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { verifyStandardWebhook, verifyWebhookSignature } from '@tollgate/protocol';
import { decryptSecret } from '../../src/merchants/secrets.ts';
import { ReceiptSigner } from '../../src/mpp/receipts.ts';
import { ENCRYPTED_COLUMNS, rotateMasterKey, RotationError } from '../../src/ops/rotate-master-key.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { startTollgate, type Tollgate } from '../../src/main.ts';
import { backends, openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { buildConfig, fakeChain, TestClock, TestServer, type Creds } from '../helpers/server.ts';
import { createEndpoint, dispatch, Receiver, trigger } from './webhook-fixtures.ts';
import { Secret, TOTP } from 'otpauth';
import { PortalMfa } from '../../src/portal/mfa.ts';
import { findUserByEmail } from '../../src/portal/repo.ts';
import { addPortalUser, PortalClient } from '../helpers/portal.ts';

/** A portal user's current code (the secret read back through the key that encrypts it). */
const codeOf = (secretBase32: string, ms: number) => new TOTP({ secret: Secret.fromBase32(secretBase32) }).generate({ timestamp: ms });

/** Every ciphertext column with its rows' AAD, read straight from the database. */
async function allCiphertexts(t: TestDatabase): Promise<{ where: string; stored: string; aad: string }[]> {
  const out = [];
  for (const spec of ENCRYPTED_COLUMNS) {
    const { rows } = await t.db.query<Record<string, string | null>>(`SELECT ${spec.key} AS k, ${spec.columns.join(', ')} FROM ${spec.table}`);
    for (const r of rows) for (const c of spec.columns) if (r[c]) out.push({ where: `${spec.table}.${c}`, stored: r[c]!, aad: spec.aad(r.k!) });
  }
  return out;
}

for (const backend of backends()) {
  describe(`rotate-master-key (${backend})`, () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const clock = new TestClock();
    let database: TestDatabase;
    let rx: Receiver;
    let merchants: Creds[];
    let endpoint: { id: string; secret: string };
    let rotatedSecret: string;
    let jwksBefore: string;
    let portalPassword: string;
    let totpSecret: string;

    const start = async (masterKey: Buffer): Promise<TestServer> => {
      const tg: Tollgate = await startTollgate(buildConfig({ chains: [fakeChain()], masterKey }), { db: database.db, clock, http: { logger: false }, role: 'api' });
      return new TestServer(tg, database, clock);
    };

    before(async () => {
      database = await openTestDatabase(backend);
      rx = await Receiver.start();
      // Secrets of every kind under the old key: two merchants (one with a second API key), a
      // webhook endpoint whose secret was rotated (current + previous ciphertext), receipt keys.
      const s = await start(oldKey);
      merchants = [await s.createMerchant({ name: 'One' }), await s.createMerchant({ name: 'Two' })];
      const extra = await s.admin('POST', `/admin/v1/merchants/${merchants[0]!.merchantId}/api-keys`);
      assert.equal(extra.status, 201, extra.text);
      merchants.push({ merchantId: merchants[0]!.merchantId, apiKey: extra.body.api_key, apiSecret: extra.body.api_secret });
      endpoint = await createEndpoint(s, merchants[0]!, rx.url, ['order.invoiced']);
      const rot = await s.admin('POST', `/admin/v1/merchants/${merchants[0]!.merchantId}/webhooks/${endpoint.id}/rotate-secret`, { overlap_seconds: 3600 });
      assert.equal(rot.status, 200, rot.text);
      rotatedSecret = rot.body.secret;
      const signer = new ReceiptSigner(database.db, oldKey);
      await signer.ensureKey();
      await signer.rotate(); // a retired key and an active one
      jwksBefore = JSON.stringify(await signer.jwks());
      // A portal user with a second factor: its TOTP secret is a ciphertext too.
      portalPassword = await addPortalUser(s, merchants[1]!.merchantId, 'totp@rotate.example', 'viewer');
      const mfa = new PortalMfa(database.db, oldKey, clock);
      totpSecret = (await mfa.setup((await findUserByEmail(database.db, 'totp@rotate.example'))!)).secret;
      const on = await mfa.enable((await findUserByEmail(database.db, 'totp@rotate.example'))!, codeOf(totpSecret, clock.ms));
      assert.equal(on.kind, 'enabled');
      await s.tg.close();
    });
    after(async () => {
      await rx.close();
      if (backend === 'postgres') await database.db.close().catch(() => {}); // the pool opened after the rotation
      await database.drop();
    });

    it('the registry names every ciphertext column of the schema', async () => {
      const { rows } = await database.db.query<{ t: string; c: string }>(
        `SELECT table_name AS t, column_name AS c FROM information_schema.columns
          WHERE table_schema = current_schema() AND data_type = 'text'
            AND (column_name LIKE '%ciphertext%' OR column_name LIKE '%encrypted%' OR column_name LIKE '%secret%') ORDER BY 1, 2`,
      );
      const registered = ENCRYPTED_COLUMNS.flatMap((s) => s.columns.map((c) => `${s.table}.${c}`)).sort();
      assert.deepEqual(
        rows.map((r) => `${r.t}.${r.c}`),
        registered,
      );
    });

    it('a wrong current key is refused and nothing changes', async () => {
      const before = await allCiphertexts(database);
      await assert.rejects(rotateMasterKey(database.db, randomBytes(32), newKey), (err: Error) => err instanceof RotationError && /does not decrypt with the current MASTER_KEY/.test(err.message));
      assert.deepEqual(await allCiphertexts(database), before);
      await assert.rejects(rotateMasterKey(database.db, oldKey, oldKey), /new key is the current MASTER_KEY/);
    });

    if (backend === 'postgres') {
      it('refuses while another Tollgate process is connected', async () => {
        const other = await openPostgres(database.url!, { max: 1 });
        try {
          await other.query('SELECT 1');
          await assert.rejects(rotateMasterKey(database.db, oldKey, newKey), /other Tollgate connection\(s\) to this database/);
        } finally {
          await other.close();
        }
        // the test database's own pool is Tollgate's too: rotation runs on one connection of its own
      });
    }

    it('re-encrypts every secret: the old key opens nothing, merchants authenticate, webhooks and receipts verify', async () => {
      // The rotation runs on a database with no other Tollgate connection (the shared pool of the
      // test database is one; PostgreSQL gets a dedicated single-connection handle, as the CLI does).
      const target = backend === 'postgres' ? await openPostgres(database.url!, { max: 1, queryTimeoutMillis: 0 }) : database.db;
      if (backend === 'postgres') await database.db.close();
      try {
        const res = await rotateMasterKey(target, oldKey, newKey);
        const count = (t: string, c: string) => res.columns.find((x) => x.table === t && x.column === c)?.rows;
        assert.equal(count('api_keys', 'secret_ciphertext'), 3);
        assert.equal(count('webhook_endpoints', 'secret_ciphertext'), 1);
        assert.equal(count('webhook_endpoints', 'previous_secret_ciphertext'), 1);
        assert.equal(count('mpp_receipt_keys', 'private_ciphertext'), 2);
        assert.equal(count('portal_users', 'totp_secret_ciphertext'), 1);
      } finally {
        if (backend === 'postgres') {
          await target.close();
          database.db = await openPostgres(database.url!, { max: 10 });
        }
      }

      const stored = await allCiphertexts(database);
      assert.equal(stored.length, 8);
      for (const c of stored) {
        assert.throws(() => decryptSecret(oldKey, c.stored, c.aad), `${c.where} still opens with the old key`);
        assert.doesNotThrow(() => decryptSecret(newKey, c.stored, c.aad));
      }

      const s = await start(newKey);
      try {
        for (const m of merchants) {
          const r = await s.signed(m, 'GET', '/api/v1/merchant');
          assert.equal(r.status, 200, r.text);
        }
        clock.advance(30); // the enabling code's step is used
        const signIn = await new PortalClient(s).call('POST', '/portal/api/login', { email: 'totp@rotate.example', password: portalPassword, totp: codeOf(totpSecret, clock.ms) });
        assert.equal(signIn.status, 200, `the second factor still works after the rotation: ${signIn.text}`);
        await trigger(s, merchants[0]!, 'order.invoiced');
        await dispatch(s);
        const got = rx.received.at(-1)!;
        // Both secrets of the overlap still sign (the legacy header with the previous one, the
        // standard headers with both): receivers holding either keep verifying.
        assert.ok(verifyWebhookSignature({ secret: endpoint.secret, rawBody: got.body, header: got.headers['x-webhook-signature'] as string }));
        assert.equal(verifyStandardWebhook({ secret: rotatedSecret, headers: got.headers, rawBody: got.body, now: () => clock.ms }).ok, true);
        assert.equal(verifyStandardWebhook({ secret: endpoint.secret, headers: got.headers, rawBody: got.body, now: () => clock.ms }).ok, true);
      } finally {
        await s.tg.close();
      }

      const signer = new ReceiptSigner(database.db, newKey);
      assert.equal(JSON.stringify(await signer.jwks()), jwksBefore, 'the published key set is unchanged');
      const jws = await signer.signDocument({ hello: 'world' }, 'test+jws');
      const [h, p, sig] = jws.split('.');
      const kid = JSON.parse(Buffer.from(h!, 'base64url').toString()).kid;
      const jwk = JSON.parse(jwksBefore).keys.find((k: { kid: string }) => k.kid === kid);
      assert.ok(verify(null, Buffer.from(`${h}.${p}`), createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(sig!, 'base64url')));
      await assert.rejects(new ReceiptSigner(database.db, oldKey).signDocument({}, 'test+jws'), /unable to authenticate|Unsupported state/);
    });
  });
}
