import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/domain/auth/principal.js';
import type { AuditOrigin } from '../../src/domain/audit/request-context.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormClient } from '../helpers/form-client.js';
import { Mailbox } from '../helpers/mailbox.js';

/** Account security and Connect changes, made through the dashboard (a signed-in session) and /connect's consent. */
describe('the audit trail: account security, Connect apps and grants', () => {
  let t: TestApp;
  const mailbox = new Mailbox();
  beforeAll(async () => {
    await mailbox.start();
    t = await createTestApp({ config: { SMTP_URL: mailbox.url } });
  });
  afterAll(async () => {
    await t.close();
    await mailbox.stop();
  });

  it('records PIN set and changed, app registered and deleted, grant approved and revoked, and a password reset', async () => {
    const address = `au-${randomUUID()}@example.test`;
    const ip = '10.9.8.7';
    const client = new FormClient(t.app, ip);
    await client.get('/signup');
    await client.post('/signup', { email: address, password: 'correct horse battery', firstName: 'A', lastName: 'B' });
    const mail = await mailbox.waitFor(address, /Confirm your email/);
    await client.get(Mailbox.linkIn(mail));
    await client.post('/verify-email', { token: new URL(Mailbox.linkIn(mail), 'http://x').searchParams.get('token')! });
    await client.get('/signin');
    expect((await client.post('/signin', { email: address, password: 'correct horse battery' })).statusCode).toBe(303);
    const user = (await t.services.users.userByEmail(address))!;

    await client.get('/dashboard/security');
    await client.post('/dashboard/security/pin', { pin: '1234' });
    await client.get('/dashboard/security');
    await client.post('/dashboard/security/pin', { currentPin: '1234', pin: '4321' });
    await client.get('/dashboard/apps');
    const registered = await client.post('/dashboard/apps', {
      name: 'Books app',
      clientType: 'confidential',
      redirectUris: 'https://app.example.com/cb',
      scopes: ['read'],
    });
    expect(registered.statusCode).toBe(201);
    const clientSecret = client.textOf('client-secret')!;
    const [app] = await t.services.oauthClients.list(user.id);

    // Consent through the authorization server, as /connect/authorize does after the user approves.
    const consent: AuditOrigin = {
      ip: '10.1.1.1',
      userAgent: 'consent-browser',
      actor: { kind: 'session', id: 'consent-session' },
    };
    const verifier = randomBytes(32).toString('base64url');
    const check = await t.services.authorizationServer.checkAuthorizeRequest({
      response_type: 'code',
      client_id: app!.clientId,
      redirect_uri: 'https://app.example.com/cb',
      scope: 'read',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    expect(check.ok).toBe(true);
    const code = await t.services.authorizationServer.issueCode(
      (check as { ok: true; request: never }).request,
      user.id,
      consent,
    );
    await t.services.authorizationServer.disconnectApp(user.id, app!.id, consent);

    await client.get('/dashboard/apps');
    expect((await client.post(`/dashboard/apps/${app!.id}/delete`)).statusCode).toBe(303);

    const other = new FormClient(t.app, '10.5.5.5');
    await other.get('/forgot-password');
    await other.post('/forgot-password', { email: address });
    const reset = await mailbox.waitFor(address, /Reset your/);
    const token = new URL(Mailbox.linkIn(reset), 'http://x').searchParams.get('token')!;
    await other.get(Mailbox.linkIn(reset));
    await other.post('/reset-password', { token, password: 'another horse battery' });

    const principal: Principal = {
      kind: 'session',
      credentialId: 'reader',
      userId: user.id,
      environment: 'sandbox',
      abilities: new Set(['READ', 'MANAGE']),
    };
    const { records } = await t.services.auditLog.list(principal, {}, 50);
    const seen = records.map((r) => [r.action, r.actorKind, r.ip]).reverse();
    expect(seen).toEqual([
      ['account.pin_set', 'session', ip],
      ['account.pin_changed', 'session', ip],
      ['connect_app.created', 'session', ip],
      ['connect_grant.approved', 'session', '10.1.1.1'],
      ['connect_grant.revoked', 'session', '10.1.1.1'],
      ['connect_app.deleted', 'session', ip],
      ['account.password_reset', 'anonymous', '10.5.5.5'],
    ]);
    // Ids and chain hashes are random hex, in which a four-digit PIN turns up by chance (one run in ~30).
    // The record's own `hash` too: it failed one CI run by holding "1234". And `seq`, the trail's
    // counter in a database other files share, which was 1236 in another.
    const randomHex = (key: string) =>
      key === 'id' || key === 'hash' || key === 'seq' || key.endsWith('Id') || key.endsWith('Hash');
    const text = JSON.stringify(records, (key, value) => (randomHex(key) ? undefined : value));
    for (const secret of [clientSecret, code, token, '1234', '4321', 'another horse battery'])
      expect(text).not.toContain(secret);
    expect(records.find((r) => r.action === 'connect_app.created')!.changes).toMatchObject({
      clientSecret: { changed: true },
      allowedScopes: { to: ['read'] },
    });
    expect(await t.services.auditLog.verify()).toMatchObject({ ok: true });

    // The owner reads the same trail in the dashboard, filtered by action.
    const reader = new FormClient(t.app);
    await reader.get('/signin');
    await reader.post('/signin', { email: address, password: 'another horse battery' });
    const page = await reader.get('/dashboard/audit?action=account.pin_changed');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('account.pin_changed');
    expect(page.body).not.toContain('<code>account.pin_set</code>');
    expect(page.body).toContain(ip);
  });
});
