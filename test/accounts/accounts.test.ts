import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountTokens } from '../../src/db/accounts-schema.js';
import { users } from '../../src/db/schema.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FormClient } from '../helpers/form-client.js';
import { Mailbox } from '../helpers/mailbox.js';

describe('accounts: sign-up, verification, sign-in, reset, PIN', () => {
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

  const email = () => `a-${randomUUID()}@example.test`;

  async function signUp(client: FormClient, address: string, password = 'correct horse battery') {
    await client.get('/signup');
    return client.post('/signup', { email: address, password, firstName: 'Ngozi', lastName: 'Eze' });
  }

  async function verify(client: FormClient, address: string) {
    const mail = await mailbox.waitFor(address, /Confirm your email/);
    await client.get(Mailbox.linkIn(mail));
    return client.post('/verify-email', {
      token: new URL(Mailbox.linkIn(mail), 'http://x').searchParams.get('token')!,
    });
  }

  async function signIn(client: FormClient, address: string, password = 'correct horse battery') {
    await client.get('/signin');
    return client.post('/signin', { email: address, password });
  }

  it('signs up, refuses sign-in until the emailed link is used, then signs in with an http-only cookie', async () => {
    const client = new FormClient(t.app);
    const address = email();
    const created = await signUp(client, address);
    expect(created.statusCode).toBe(201);
    expect(client.textOf('check-email')).toContain(address);

    const early = await signIn(client, address);
    expect(early.statusCode).toBe(403);
    expect(client.textOf('error')).toMatch(/Confirm your email/);

    const verified = await verify(client, address);
    expect(verified.statusCode).toBe(200);
    // The link works once.
    const link = Mailbox.linkIn(await mailbox.waitFor(address, /Confirm/));
    await client.get(link);
    const again = await client.post('/verify-email', { token: new URL(link, 'http://x').searchParams.get('token')! });
    expect(again.statusCode).toBe(400);

    const signedIn = await signIn(client, address);
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.location).toBe('/dashboard');
    const cookie = signedIn.cookies.find((c) => c.name === 'pgw_session')!;
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');
    const dashboard = await client.get('/dashboard');
    expect(dashboard.statusCode).toBe(200);
    expect(client.textOf('account-email')).toContain(address);

    // Stored: an argon2id hash, never the password; the session row holds a hash, not the cookie.
    const [row] = await t.services.db.select().from(users).where(eq(users.email, address));
    expect(row!.passwordHash).toMatch(/^\$argon2id\$/);
    expect(row!.verified).toBe(true);
  });

  it('names the bad field, answers a taken email like a new one (and tells its owner by mail), and counts a wrong password like an unknown email', async () => {
    const client = new FormClient(t.app);
    expect((await signUp(client, 'not-an-email')).statusCode).toBe(400);
    expect(client.textOf('error')).toMatch(/email/);
    expect((await signUp(client, email(), 'short')).statusCode).toBe(400);
    expect(client.textOf('error')).toMatch(/password must be at least 10/);
    const address = email();
    expect((await signUp(client, address)).statusCode).toBe(201);
    const again = await signUp(client, address.toUpperCase());
    expect(again.statusCode).toBe(201);
    expect(client.textOf('check-email')).toContain(address.toUpperCase());
    await mailbox.waitFor(address, /already have a Partner Gateway account/);

    await verify(client, address);
    const wrong = await signIn(client, address, 'wrong password!!');
    const unknown = await signIn(client, email(), 'wrong password!!');
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.body.match(/id="error">([^<]+)/)?.[1]).toBe(unknown.body.match(/id="error">([^<]+)/)?.[1]);
  });

  it('limits guessing: the 11th sign-in for one email in a minute is refused, whatever the address', async () => {
    const address = email();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++)
      statuses.push((await signIn(new FormClient(t.app), address, `guess number ${i}`)).statusCode);
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
  });

  it('reads a field posted twice as one value, never a server error', async () => {
    const client = new FormClient(t.app);
    const [first, last] = [email(), email()];
    await client.get('/signup');
    const answer = await client.post('/signup', {
      email: [first, last],
      password: ['one long password', 'another long password'],
    });
    expect(answer.statusCode).toBe(201);
    expect(client.textOf('check-email')).toContain(last);
    await mailbox.waitFor(last, /Confirm your email/);
    await client.get('/signin');
    expect((await client.post('/signin', { email: [first, last], password: 'wrong' })).statusCode).toBe(401);
  });

  it('refuses forms without the CSRF token, or with one from another session', async () => {
    const client = new FormClient(t.app);
    await client.get('/signup');
    const missing = await client.post('/signup', { email: email(), password: 'correct horse battery', _csrf: '' });
    expect(missing.statusCode).toBe(403);
    const other = new FormClient(t.app);
    await other.get('/signup');
    const foreign = await client.post('/signup', {
      email: email(),
      password: 'correct horse battery',
      _csrf: other.csrfToken()!,
    });
    expect(foreign.statusCode).toBe(403);
  });

  it('resets a password by emailed link: stored hashed, works once, ends every session', async () => {
    const client = new FormClient(t.app);
    const address = email();
    await signUp(client, address);
    await verify(client, address);
    expect((await signIn(client, address)).statusCode).toBe(303);

    const other = new FormClient(t.app);
    await other.get('/forgot-password');
    expect((await other.post('/forgot-password', { email: address })).statusCode).toBe(200);
    // An unknown email answers the same page, and sends nothing.
    await other.get('/forgot-password');
    expect(other.textOf('check-email')).toBeUndefined();
    const unknownAnswer = await other.post('/forgot-password', { email: email() });
    expect(unknownAnswer.statusCode).toBe(200);

    const mail = await mailbox.waitFor(address, /Reset your/);
    const link = Mailbox.linkIn(mail);
    const token = new URL(link, 'http://x').searchParams.get('token')!;
    const [user] = await t.services.db.select().from(users).where(eq(users.email, address));
    const stored = await t.services.db.select().from(accountTokens).where(eq(accountTokens.userId, user!.id));
    expect(stored.length).toBeGreaterThan(0);
    expect(JSON.stringify(stored)).not.toContain(token);

    await other.get(link);
    expect((await other.post('/reset-password', { token, password: 'short' })).statusCode).toBe(400);
    expect((await other.post('/reset-password', { token, password: 'a new long passphrase' })).statusCode).toBe(200);
    await other.get(link);
    expect((await other.post('/reset-password', { token, password: 'yet another passphrase' })).statusCode).toBe(400);

    // The session signed in before the reset is over.
    expect((await client.get('/dashboard')).statusCode).toBe(303);
    expect((await signIn(client, address)).statusCode).toBe(401);
    expect((await signIn(client, address, 'a new long passphrase')).statusCode).toBe(303);

    // The API never shows a reset token.
    const key = (await t.services.apiKeys.create({ userId: user!.id, name: 'k', environment: 'sandbox' })).key;
    const me = await t.app.inject({ url: '/api/v1/user/me', headers: { 'x-api-key': key } });
    expect(me.json().data.resetToken).toBeNull();
  });

  it('lets one of two concurrent resets with the same link win', async () => {
    const client = new FormClient(t.app);
    const address = email();
    await signUp(client, address);
    await verify(client, address);
    await t.services.accounts.requestPasswordReset(address);
    await mailbox.waitFor(address, /Reset your/);
    const token = new URL(
      Mailbox.linkIn(mailbox.messages.filter((m) => m.to === address && /Reset your/.test(m.subject)).at(-1)!),
      'http://x',
    ).searchParams.get('token')!;
    const outcomes = await Promise.all(
      ['first new passphrase', 'second new passphrase'].map((password) =>
        t.services.accounts.resetPassword(token, password).then(
          () => password,
          (e: { code?: string }) => e.code,
        ),
      ),
    );
    const winner = outcomes.find((o) => o !== 'BAD_USER_INPUT')!;
    expect(outcomes.filter((o) => o === 'BAD_USER_INPUT')).toHaveLength(1);
    expect((await signIn(new FormClient(t.app), address, winner)).statusCode).toBe(303);
  });

  it('sets and changes the transaction PIN (hashed), and the API shows haveTransactionPin', async () => {
    const client = new FormClient(t.app);
    const address = email();
    await signUp(client, address);
    await verify(client, address);
    await signIn(client, address);
    const [user] = await t.services.db.select().from(users).where(eq(users.email, address));
    const key = (await t.services.apiKeys.create({ userId: user!.id, name: 'k', environment: 'sandbox' })).key;
    const havePin = async () =>
      (await t.app.inject({ url: '/api/v1/user/me', headers: { 'x-api-key': key } })).json().data.haveTransactionPin;
    expect(await havePin()).toBe(false);

    await client.get('/dashboard/security');
    expect((await client.post('/dashboard/security/pin', { pin: '12a4' })).statusCode).toBe(400);
    await client.get('/dashboard/security');
    expect((await client.post('/dashboard/security/pin', { pin: '1234' })).statusCode).toBe(200);
    t.services.users.forget(user!.id);
    expect(await havePin()).toBe(true);
    const [row] = await t.services.db.select().from(users).where(eq(users.id, user!.id));
    expect(row!.transactionPinHash).toMatch(/^\$argon2id\$/);

    await client.get('/dashboard/security');
    expect((await client.post('/dashboard/security/pin', { pin: '5678' })).statusCode).toBe(400);
    expect(client.textOf('error')).toMatch(/currentPin is required/);
    await client.get('/dashboard/security');
    expect((await client.post('/dashboard/security/pin', { pin: '5678', currentPin: '9999' })).statusCode).toBe(400);
    await client.get('/dashboard/security');
    expect((await client.post('/dashboard/security/pin', { pin: '5678', currentPin: '1234' })).statusCode).toBe(200);
  });

  it('sends people who are not signed in to sign in, and back where they were going', async () => {
    const client = new FormClient(t.app);
    const page = await client.get('/dashboard/keys?env=production');
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe('/signin?next=%2Fdashboard%2Fkeys%3Fenv%3Dproduction');
    // Only paths on this site are followed after sign-in.
    await client.get('/signin?next=//evil.example/');
    expect(client.lastPage).toContain('name="next" value="/dashboard"');
  });
});
