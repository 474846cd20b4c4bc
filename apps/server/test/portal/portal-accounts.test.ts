// Portal account security (issue 29, items 3-5) on a real server and database: operator sessions
// end when ADMIN_TOKEN rotates, sign out everywhere, invitations of a disabled user and revoked
// ones create nobody, whitespace passwords are refused, and a password change ends the other
// sessions. CSRF on the new routes is covered by portal-security.test.ts (every unsafe route).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { backends } from '../helpers/db.ts';
import { addPortalUser, PortalClient } from '../helpers/portal.ts';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../helpers/server.ts';

const tokenOf = (url: string) => new URL(url).hash.split('/').pop()!;

for (const backend of backends()) {
  describe(`portal accounts (${backend})`, () => {
    let server: TestServer;
    let merchantId: string;
    const signedIn = async (email: string, pw: string) => {
      const c = new PortalClient(server);
      const r = await c.login(email, pw);
      assert.equal(r.status, 200, r.text);
      return c;
    };
    const alive = async (c: PortalClient) => (await c.call('GET', '/portal/api/session')).status === 200;

    before(async () => {
      server = await startTestServer({ backend, role: 'api' });
      merchantId = (await server.createMerchant({ name: 'Accounts' })).merchantId;
    });
    after(() => server?.close());

    test('operator sessions end when ADMIN_TOKEN is rotated; the database holds a keyed fingerprint, never the token', async () => {
      const op = new PortalClient(server);
      assert.equal((await op.operatorLogin(TEST_ADMIN_TOKEN)).status, 200);
      assert.ok(await alive(op));
      const { rows } = await server.db.query<{ operator_key_fp: string }>("SELECT operator_key_fp FROM portal_sessions WHERE role = 'operator'");
      assert.ok(rows.length > 0 && rows.every((r) => /^[0-9a-f]{64}$/.test(r.operator_key_fp)));
      const sha = createHash('sha256').update(TEST_ADMIN_TOKEN).digest('hex');
      assert.ok(rows.every((r) => r.operator_key_fp !== sha && !r.operator_key_fp.includes(TEST_ADMIN_TOKEN)));
      const config = server.tg.deps.config;
      config.adminToken = 'rotated-admin-token-9876543210';
      try {
        assert.ok(!(await alive(op)), 'the session of the old token is dead');
        assert.equal((await op.operatorLogin(TEST_ADMIN_TOKEN)).status, 401);
        const fresh = new PortalClient(server);
        assert.equal((await fresh.operatorLogin('rotated-admin-token-9876543210')).status, 200);
        assert.ok(await alive(fresh));
        config.adminToken = undefined;
        assert.ok(!(await alive(fresh)), 'operator sign-in turned off: no operator session lives');
      } finally {
        config.adminToken = TEST_ADMIN_TOKEN;
      }
    });

    test("sign out everywhere: a user ends all its own sessions (no one else's); the operator ends every operator session", async () => {
      const pw = await addPortalUser(server, merchantId, 'everywhere@acc.example', 'viewer');
      const otherPw = await addPortalUser(server, merchantId, 'bystander@acc.example', 'viewer');
      const [a, b] = [await signedIn('everywhere@acc.example', pw), await signedIn('everywhere@acc.example', pw)];
      const bystander = await signedIn('bystander@acc.example', otherPw);
      const out = await a.call('POST', '/portal/api/logout/everywhere');
      assert.equal(out.status, 200, out.text);
      assert.equal(out.body.sessions_ended, 2);
      assert.match(out.headers.get('set-cookie')!, /Max-Age=0/);
      assert.ok(!(await alive(a)) && !(await alive(b)));
      assert.ok(await alive(bystander));
      const [op1, op2] = [new PortalClient(server), new PortalClient(server)];
      await op1.operatorLogin(TEST_ADMIN_TOKEN);
      await op2.operatorLogin(TEST_ADMIN_TOKEN);
      assert.equal((await op1.call('POST', '/portal/api/logout/everywhere')).status, 200);
      assert.ok(!(await alive(op1)) && !(await alive(op2)));
      assert.ok(await alive(bystander), 'users keep their sessions');
    });

    test("a disabled owner's pending invitations create nobody; disabling revokes them", async () => {
      const boss = await signedIn('boss@acc.example', await addPortalUser(server, merchantId, 'boss@acc.example', 'owner'));
      const inv = await boss.call('POST', '/portal/api/team/invitations', { email: 'deputy@acc.example', role: 'owner' });
      const deputy = new PortalClient(server);
      assert.equal((await deputy.call('POST', '/portal/api/invitations/accept', { token: tokenOf(inv.body.invitation_url), password: 'deputy-password-1' })).status, 200);
      const pending = await deputy.call('POST', '/portal/api/team/invitations', { email: 'accomplice@acc.example', role: 'owner' });
      assert.equal(pending.status, 201);
      const team = await boss.call('GET', '/portal/api/team');
      const deputyId = team.body.users.find((u: { email: string }) => u.email === 'deputy@acc.example').user_id;
      assert.ok(team.body.invitations.some((i: { email: string }) => i.email === 'accomplice@acc.example'));
      assert.equal((await boss.call('POST', `/portal/api/team/${deputyId}/disable`)).status, 200);
      const after = await boss.call('GET', '/portal/api/team');
      assert.ok(!after.body.invitations.some((i: { email: string }) => i.email === 'accomplice@acc.example'), 'revoked on disable');
      const acc = await new PortalClient(server).call('POST', '/portal/api/invitations/accept', { token: tokenOf(pending.body.invitation_url), password: 'accomplice-pass-1' });
      assert.equal(acc.status, 410, acc.text);
      assert.equal(acc.body.code, 'invitation_not_usable');
      const { rows } = await server.db.query('SELECT 1 FROM portal_users WHERE email = $1', ['accomplice@acc.example']);
      assert.equal(rows.length, 0);
    });

    test('an invitation whose sender was disabled before the revoke rule existed is refused too', async () => {
      const pw = await addPortalUser(server, merchantId, 'oldboss@acc.example', 'owner');
      const old = await signedIn('oldboss@acc.example', pw);
      const inv = await old.call('POST', '/portal/api/team/invitations', { email: 'leftover@acc.example', role: 'owner' });
      // as an older release left it: the user disabled, its invitation still there
      await server.db.query('UPDATE portal_users SET disabled_at = now() WHERE email = $1', ['oldboss@acc.example']);
      const acc = await new PortalClient(server).call('POST', '/portal/api/invitations/accept', { token: tokenOf(inv.body.invitation_url), password: 'leftover-pass-12' });
      assert.equal(acc.status, 410, acc.text);
    });

    test('an owner revokes an invitation: its link stops working, a second revoke is 404, viewers cannot', async () => {
      const owner = await signedIn('revoker@acc.example', await addPortalUser(server, merchantId, 'revoker@acc.example', 'owner'));
      const inv = await owner.call('POST', '/portal/api/team/invitations', { email: 'Revoked@acc.example', role: 'developer' });
      const viewer = await signedIn('everyviewer@acc.example', await addPortalUser(server, merchantId, 'everyviewer@acc.example', 'viewer'));
      assert.equal((await viewer.call('POST', '/portal/api/team/invitations/revoke', { email: 'revoked@acc.example' })).status, 403);
      const r = await owner.call('POST', '/portal/api/team/invitations/revoke', { email: 'REVOKED@acc.example' });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { email: 'revoked@acc.example', revoked: 1 });
      const acc = await new PortalClient(server).call('POST', '/portal/api/invitations/accept', { token: tokenOf(inv.body.invitation_url), password: 'revoked-pass-123' });
      assert.equal(acc.status, 410);
      const again = await owner.call('POST', '/portal/api/team/invitations/revoke', { email: 'revoked@acc.example' });
      assert.equal(again.status, 404);
      assert.equal(again.body.code, 'not_found');
    });

    test('a password of only spaces (or invisible characters) is refused; nothing is created', async () => {
      const owner = await signedIn('spaces-owner@acc.example', await addPortalUser(server, merchantId, 'spaces-owner@acc.example', 'owner'));
      const inv = await owner.call('POST', '/portal/api/team/invitations', { email: 'spaces@acc.example', role: 'viewer' });
      for (const password of [' '.repeat(12), '\t \n'.repeat(5), '\u00a0\u200b\u3000'.repeat(5)]) {
        const r = await new PortalClient(server).call('POST', '/portal/api/invitations/accept', { token: tokenOf(inv.body.invitation_url), password });
        assert.equal(r.status, 400, `${JSON.stringify(password)}: ${r.text}`);
        assert.equal(r.body.code, 'invalid_request');
        assert.equal(r.body.param, 'password');
      }
      const short = await new PortalClient(server).call('POST', '/portal/api/invitations/accept', { token: tokenOf(inv.body.invitation_url), password: 'short' });
      assert.equal(short.status, 400, 'the length rule stays');
      const { rows } = await server.db.query('SELECT 1 FROM portal_users WHERE email = $1', ['spaces@acc.example']);
      assert.equal(rows.length, 0);
      const ok = await new PortalClient(server).call('POST', '/portal/api/invitations/accept', { token: tokenOf(inv.body.invitation_url), password: '  spaces  around  ' });
      assert.equal(ok.status, 200, 'spaces inside a real password are fine');
    });

    test('password change: current password required, whitespace refused, other sessions end, this one stays', async () => {
      const pw = await addPortalUser(server, merchantId, 'changer@acc.example', 'viewer');
      const [me, elsewhere] = [await signedIn('changer@acc.example', pw), await signedIn('changer@acc.example', pw)];
      const wrong = await me.call('POST', '/portal/api/password', { current_password: 'not-the-password', new_password: 'brand-new-password-1' });
      assert.equal(wrong.status, 403, wrong.text);
      assert.equal(wrong.body.code, 'password_incorrect');
      const blank = await me.call('POST', '/portal/api/password', { current_password: pw, new_password: ' '.repeat(16) });
      assert.equal(blank.status, 400, blank.text);
      assert.equal(blank.body.param, 'new_password');
      assert.equal((await me.call('POST', '/portal/api/password', { current_password: pw, new_password: 'brand-new-password-1' }, { csrf: null })).status, 403, 'CSRF');
      const ok = await me.call('POST', '/portal/api/password', { current_password: pw, new_password: 'brand-new-password-1' });
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(ok.body, { changed: true, other_sessions_ended: 1 });
      assert.ok(await alive(me), 'this session stays');
      assert.ok(!(await alive(elsewhere)), 'the other session ended');
      assert.equal((await new PortalClient(server).login('changer@acc.example', pw)).status, 401);
      assert.equal((await new PortalClient(server).login('changer@acc.example', 'brand-new-password-1')).status, 200);
      const op = new PortalClient(server);
      await op.operatorLogin(TEST_ADMIN_TOKEN);
      assert.equal((await op.call('POST', '/portal/api/password', { current_password: 'x', new_password: 'brand-new-password-2' })).status, 400, 'the operator has no password');
    });

    test('password change guesses are throttled like sign-ins (per account)', async () => {
      const pw = await addPortalUser(server, merchantId, 'guessed@acc.example', 'viewer');
      const thief = await signedIn('guessed@acc.example', pw);
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push((await thief.call('POST', '/portal/api/password', { current_password: `guess-${i}`, new_password: 'thief-password-123' })).status);
      assert.deepEqual(answers, [403, 403, 403, 403, 403, 429]);
    });
  });
}
