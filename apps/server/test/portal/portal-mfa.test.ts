// Portal second factor (TOTP, RFC 6238) and password reset links (issue 29, item 5), on a real
// server and database. Codes are computed here from the RFC's own algorithm with node:crypto (not
// with the library the server uses), against the server's clock; mailed links go through a real
// SMTP server on loopback (smtp-server) and the server's real SMTP client.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { SmtpSettings } from '../../src/config/secrets.ts';
import { backends } from '../helpers/db.ts';
import { addPortalUser, PortalClient } from '../helpers/portal.ts';
import { spawnTollgate } from '../helpers/process.ts';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../helpers/server.ts';

/** RFC 4648 base32 → bytes. */
function base32(s: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of s.replace(/=+$/, '')) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  return Buffer.from(bits.match(/.{8}/g)!.map((b) => parseInt(b, 2)));
}

/** RFC 6238 TOTP (SHA-1, 6 digits, 30 s) at `ms`, from RFC 4226's dynamic truncation. */
function totpAt(key: Buffer, ms: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(ms / 1000 / 30)));
  const h = createHmac('sha1', key).update(counter).digest();
  const o = h[h.length - 1]! & 0xf;
  return String((h.readUInt32BE(o) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

test("the test's own TOTP matches RFC 6238 appendix B (SHA-1, T = 59 s → 94287082, last 6 digits)", () => {
  assert.equal(totpAt(Buffer.from('12345678901234567890'), 59_000), '287082');
  assert.equal(totpAt(Buffer.from('12345678901234567890'), 1111111109_000), '081804');
});

for (const backend of backends()) {
  describe(`portal second factor and password resets (${backend})`, () => {
    let server: TestServer;
    let mailServer: SMTPServer;
    const mails: { to: string[]; body: string }[] = [];
    let merchantId: string;
    let logs = '';
    const now = () => server.clock.now();

    before(async () => {
      mailServer = new SMTPServer({
        authOptional: true,
        disabledCommands: ['STARTTLS'],
        onData(stream, session, done) {
          let body = '';
          stream.on('data', (c: Buffer) => (body += c.toString('utf8')));
          stream.on('end', () => {
            mails.push({ to: session.envelope.rcptTo.map((r) => r.address), body });
            done();
          });
        },
      });
      await new Promise<void>((resolve) => mailServer.listen(0, '127.0.0.1', resolve));
      const port = (mailServer.server.address() as { port: number }).port;
      server = await startTestServer({
        backend,
        role: 'api',
        config: { smtp: new SmtpSettings(`smtp://127.0.0.1:${port}?ignoreTLS=true`, 'Tollgate <portal@tollgate.example>') },
        http: { logger: { level: 'info', stream: { write: (l: string) => void (logs += l) } } } as never,
      });
      merchantId = (await server.createMerchant({ name: 'Second Factor' })).merchantId;
    });
    after(async () => {
      await server?.close();
      await new Promise<void>((resolve) => mailServer.close(() => resolve()));
    });

    async function enroll(c: PortalClient): Promise<{ key: Buffer; recovery: string[] }> {
      const setup = await c.call('POST', '/portal/api/totp/setup', {});
      assert.equal(setup.status, 200, setup.text);
      const url = new URL(setup.body.otpauth_url);
      assert.equal(url.protocol, 'otpauth:');
      assert.equal(url.searchParams.get('secret'), setup.body.secret);
      const key = base32(setup.body.secret);
      assert.equal((await c.call('POST', '/portal/api/totp/enable', { code: '000000' === totpAt(key, now()) ? '111111' : '000000' })).body.code, 'totp_code_invalid');
      const on = await c.call('POST', '/portal/api/totp/enable', { code: totpAt(key, now()) });
      assert.equal(on.status, 200, on.text);
      assert.equal(on.body.recovery_codes.length, 10);
      return { key, recovery: on.body.recovery_codes };
    }

    test('TOTP: set up with a confirming code; sign-in then needs a current code, each code works once, recovery codes once each', async () => {
      const pw = await addPortalUser(server, merchantId, 'totp@mfa.example', 'developer');
      const c = new PortalClient(server);
      assert.deepEqual((await c.call('GET', '/portal/api/session/state')).body, { signed_in: false });
      assert.equal((await c.login('totp@mfa.example', pw)).body.totp_enabled, false);
      assert.deepEqual((await c.call('GET', '/portal/api/session/state')).body, { signed_in: true });
      const { key, recovery } = await enroll(c);
      assert.equal((await c.call('GET', '/portal/api/session')).body.totp_enabled, true);
      const { rows } = await server.db.query<{ totp_secret_ciphertext: string }>("SELECT totp_secret_ciphertext FROM portal_users WHERE email = 'totp@mfa.example'");
      assert.match(rows[0]!.totp_secret_ciphertext, /^v1:/, 'encrypted at rest');
      assert.ok(!rows[0]!.totp_secret_ciphertext.includes(key.toString('hex')));

      const fresh = new PortalClient(server);
      const first = await fresh.login('totp@mfa.example', pw);
      assert.deepEqual([first.status, first.body.code], [401, 'totp_required']);
      assert.equal(fresh.cookie, undefined, 'no session without the second factor');
      const wrong = await fresh.call('POST', '/portal/api/login', { email: 'totp@mfa.example', password: pw, totp: totpAt(key, now() - 10 * 60_000) });
      assert.deepEqual([wrong.status, wrong.body.code], [401, 'login_failed']);
      server.clock.advance(30); // a new step: the enabling code's step is used up
      const code = totpAt(key, now());
      const ok = await fresh.call('POST', '/portal/api/login', { email: 'totp@mfa.example', password: pw, totp: code });
      assert.equal(ok.status, 200, ok.text);
      const replay = await new PortalClient(server).call('POST', '/portal/api/login', { email: 'totp@mfa.example', password: pw, totp: code });
      assert.equal(replay.status, 401, 'the same code does not sign in twice');
      const byRecovery = await new PortalClient(server).call('POST', '/portal/api/login', { email: 'totp@mfa.example', password: pw, totp: recovery[0]!.toUpperCase() });
      assert.equal(byRecovery.status, 200, byRecovery.text);
      const again = await new PortalClient(server).call('POST', '/portal/api/login', { email: 'totp@mfa.example', password: pw, totp: recovery[0]! });
      assert.equal(again.status, 401, 'a recovery code works once');
      // New recovery codes: the old unused ones stop working.
      server.clock.advance(30);
      const regen = await c.call('POST', '/portal/api/totp/recovery-codes', { code: totpAt(key, now()) });
      assert.equal(regen.status, 200, regen.text);
      const old = await new PortalClient(server).call('POST', '/portal/api/login', { email: 'totp@mfa.example', password: pw, totp: recovery[1]! });
      assert.equal(old.status, 401);
      // Turning it off needs a factor; then the password alone signs in again.
      assert.equal((await c.call('POST', '/portal/api/totp/disable', { code: '123456' === totpAt(key, now()) ? '654321' : '123456' })).body.code, 'totp_code_invalid');
      const off = await c.call('POST', '/portal/api/totp/disable', { code: regen.body.recovery_codes[0] });
      assert.equal(off.status, 200, off.text);
      assert.equal((await new PortalClient(server).login('totp@mfa.example', pw)).status, 200);
    });

    test('wrong codes count like wrong passwords: the account locks after 5', async () => {
      const pw = await addPortalUser(server, merchantId, 'lock@mfa.example', 'viewer');
      const c = new PortalClient(server);
      await c.login('lock@mfa.example', pw);
      const { key } = await enroll(c);
      const bad = totpAt(key, now()) === '999999' ? '999998' : '999999';
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await new PortalClient(server).call('POST', '/portal/api/login', { email: 'lock@mfa.example', password: pw, totp: bad })).status);
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429]);
      server.clock.advance(30);
      assert.equal((await new PortalClient(server).call('POST', '/portal/api/login', { email: 'lock@mfa.example', password: pw, totp: totpAt(key, now()) })).status, 429, 'even a right code waits');
      server.clock.advance(15 * 60);
    });

    test('an owner requires a second factor: users without one get a session that can only set it up', async () => {
      const m = (await server.createMerchant({ name: 'Strict' })).merchantId;
      const ownerPw = await addPortalUser(server, m, 'owner@strict.example', 'owner');
      const devPw = await addPortalUser(server, m, 'dev@strict.example', 'developer');
      const owner = new PortalClient(server);
      await owner.login('owner@strict.example', ownerPw);
      const early = await owner.call('PUT', '/portal/api/settings/require-totp', { require_totp: true });
      assert.equal(early.status, 400, 'not before the owner has a factor (no lock-out)');
      const { key } = await enroll(owner);
      assert.equal((await owner.call('PUT', '/portal/api/settings/require-totp', { require_totp: true })).status, 200);
      assert.equal((await owner.call('GET', '/portal/api/settings')).body.require_totp, true);
      server.clock.advance(30);
      assert.equal((await owner.call('POST', '/portal/api/totp/disable', { code: totpAt(key, now()) })).body.code, 'totp_required_by_merchant');

      const dev = new PortalClient(server);
      const s = await dev.login('dev@strict.example', devPw);
      assert.equal(s.status, 200, s.text);
      assert.equal(s.body.totp_enrollment_required, true);
      const blocked = await dev.call('GET', '/portal/api/orders');
      assert.deepEqual([blocked.status, blocked.body.code], [403, 'totp_enrollment_required']);
      assert.equal((await dev.call('POST', '/portal/api/api-keys', {})).body.code, 'totp_enrollment_required');
      await enroll(dev);
      assert.equal((await dev.call('GET', '/portal/api/orders')).status, 200, 'the same session is whole once the factor is set up');
      assert.equal((await dev.call('GET', '/portal/api/session')).body.totp_enrollment_required, false);
    });

    test('operator reset link (CLI): single use, ends every session, the old password stops working', async () => {
      const pw = await addPortalUser(server, merchantId, 'forgot@mfa.example', 'viewer');
      const before = new PortalClient(server);
      await before.login('forgot@mfa.example', pw);
      const p = spawnTollgate(['portal', 'reset-link', 'Forgot@MFA.example'], { TOLLGATE_URL: server.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN });
      assert.equal(await new Promise((resolve) => p.child.once('exit', resolve)), 0, p.output());
      const url = /reset_url: (\S+)/.exec(p.output())?.[1];
      assert.ok(url?.startsWith(`${server.tg.deps.config.publicBaseUrl}/portal/#/reset/`), p.output());
      const token = url!.split('/').pop()!;
      const bogus = await server.request('POST', '/portal/api/password-resets/complete', { body: { token: 'x'.repeat(43), password: 'a new long password 1' } });
      assert.deepEqual([bogus.status, bogus.body.code], [410, 'reset_link_not_usable']);
      const done = await server.request('POST', '/portal/api/password-resets/complete', { body: { token, password: 'a new long password 1' } });
      assert.equal(done.status, 200, done.text);
      assert.deepEqual(done.body, { email: 'forgot@mfa.example', sessions_ended: 1 });
      assert.equal((await before.call('GET', '/portal/api/session')).status, 401, 'the old session ended');
      assert.equal((await new PortalClient(server).login('forgot@mfa.example', pw)).status, 401);
      assert.equal((await new PortalClient(server).login('forgot@mfa.example', 'a new long password 1')).status, 200);
      const reuse = await server.request('POST', '/portal/api/password-resets/complete', { body: { token, password: 'another long password 2' } });
      assert.equal(reuse.status, 410, 'single use');
      const unknown = await server.admin('POST', '/admin/v1/portal-users/password-resets', { email: 'nobody@mfa.example' });
      assert.deepEqual([unknown.status, unknown.body.code], [404, 'portal_user_not_found']);
    });

    test('mailed reset link over SMTP: same answer for unknown emails, the link works, nothing of it in the logs', async () => {
      await addPortalUser(server, merchantId, 'mailme@mfa.example', 'viewer');
      mails.length = 0;
      const known = await server.request('POST', '/portal/api/password-resets', { body: { email: 'mailme@mfa.example' } });
      const unknown = await server.request('POST', '/portal/api/password-resets', { body: { email: 'ghost@mfa.example' } });
      assert.deepEqual([known.status, known.body], [202, { requested: true }]);
      assert.deepEqual([unknown.status, unknown.body], [known.status, known.body], 'no account enumeration');
      const deadline = Date.now() + 10_000;
      while (mails.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(mails.length, 1, 'one mail, to the known address only');
      assert.deepEqual(mails[0]!.to, ['mailme@mfa.example']);
      const body = mails[0]!.body.replace(/=\r?\n/g, '');
      const token = /\/portal\/#\/reset\/([A-Za-z0-9_-]{43})/.exec(body)?.[1];
      assert.ok(token, body);
      const done = await server.request('POST', '/portal/api/password-resets/complete', { body: { token, password: 'mailed new password 3' } });
      assert.equal(done.status, 200, done.text);
      assert.ok(!logs.includes(token!), 'the reset token is in no log line');
      assert.ok(!logs.includes('mailme@mfa.example'), 'nor the address');
    });
  });
}

test('without SMTP settings the self-service request is refused with a clear code', async () => {
  const server = await startTestServer({ backend: 'pglite', role: 'api' });
  try {
    const r = await server.request('POST', '/portal/api/password-resets', { body: { email: 'a@b.example' } });
    assert.deepEqual([r.status, r.body.code], [403, 'password_reset_unavailable']);
  } finally {
    await server.close();
  }
});
