import type { Database } from '../../db/client.js';
import { recordAudit } from '../audit/audit-log.js';
import type { AuditOrigin } from '../audit/request-context.js';
import { digestOf, newOpaqueToken } from '../auth/opaque-token.js';
import type { Clock } from '../clock.js';
import { badInput, DomainError } from '../errors.js';
import type { User } from '../users/user.js';
import type { UserService } from '../users/user-service.js';
import { accountStore, type SessionRecord } from './account-store.js';
import type { Mailer } from './mailer.js';
import { checkPassword, checkPin, hashSecret, verifySecret } from './secrets-hashing.js';

export const SESSION_TTL_MS = 12 * 3600_000;
export const VERIFY_LINK_TTL_MS = 24 * 3600_000;
export const RESET_LINK_TTL_MS = 3600_000;

const SESSION_PREFIX = 'pgw_ses_';
const LINK_PREFIX = 'pgw_lnk_';

export interface SignUpInput {
  email: string;
  password: string;
  firstName?: string | undefined;
  lastName?: string | undefined;
}

export interface SignedIn {
  /** The cookie value. Only its hash is stored. */
  token: string;
  session: SessionRecord;
  user: User;
}

/** Sign-up, email verification, sign-in sessions, password reset and the transaction PIN. */
export class AccountService {
  /** Verified against when the email is unknown, so a wrong email costs as long as a wrong password. */
  private dummyHash: Promise<string> | undefined;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly users: UserService,
    private readonly mailer: Mailer,
    private readonly publicUrl: string,
  ) {}

  /**
   * Creates the account and mails its confirmation link. An email already registered gets a
   * notice by mail instead, and the caller sees the same answer either way, so sign-up cannot be
   * used to find out who has an account.
   */
  async signUp(input: SignUpInput): Promise<{ email: string }> {
    const password = checkPassword(input.password);
    // Refused before the account exists: an account whose confirmation can never arrive is stuck.
    if (!this.mailer.canDeliver)
      throw new DomainError('SERVICE_UNAVAILABLE', 'Sign-up is unavailable: mail is not configured (SMTP_URL).');
    const email = input.email.trim();
    try {
      const user = await this.users.createUser({
        email,
        firstName: input.firstName?.trim() || undefined,
        lastName: input.lastName?.trim() || undefined,
        passwordHash: await hashSecret(password),
      });
      await this.sendVerification(user);
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'CONFLICT')) throw error;
      await this.mailer.send({
        to: email,
        subject: 'You already have a Partner Gateway account',
        text: `Someone (perhaps you) tried to sign up with this email, which already has an account.\n\nSign in: ${this.publicUrl}/signin\nForgot the password? ${this.publicUrl}/forgot-password\n\nIf it was not you, ignore this message.\n`,
      });
    }
    return { email };
  }

  /** Mails a fresh verification link (earlier ones stop working). */
  async sendVerification(user: Pick<User, 'id' | 'email'>): Promise<void> {
    const link = await this.newLink(user.id, 'verify_email', VERIFY_LINK_TTL_MS);
    await this.mailer.send({
      to: user.email,
      subject: 'Confirm your email for Partner Gateway',
      text: `Confirm your email address by opening this link (valid for 24 hours):\n\n${this.publicUrl}/verify-email?token=${link}\n\nIf you did not sign up, ignore this message.\n`,
    });
  }

  /** Answers the same whether or not the email is known or already verified. */
  async resendVerification(email: string): Promise<void> {
    const found = await accountStore.findCredentials(this.db, email);
    if (found && !found.verified) await this.sendVerification({ id: found.id, email: email.trim() });
  }

  /** Marks the user verified; a used, expired or unknown link is refused. */
  async verifyEmail(token: string): Promise<void> {
    const now = this.clock.now();
    const userId = await accountStore.useToken(this.db, 'verify_email', digestOf(token), now);
    if (!userId)
      throw badInput('token', 'This verification link is invalid, used or expired. Sign in to get a new one.');
    await accountStore.updateUser(this.db, userId, { verified: true }, now);
    this.users.forget(userId);
  }

  async signIn(email: string, password: string): Promise<SignedIn> {
    const found = await accountStore.findCredentials(this.db, email);
    this.dummyHash ??= hashSecret('not a password of anyone');
    const ok = await verifySecret(found?.passwordHash ?? (await this.dummyHash), password);
    if (!found?.passwordHash || !ok) throw new DomainError('UNAUTHENTICATED', 'The email or password is wrong.');
    if (!found.verified)
      throw new DomainError('FORBIDDEN', 'Confirm your email first: open the link we sent you, or ask for a new one.', {
        field: 'email',
      });
    const now = this.clock.now();
    const token = newOpaqueToken(SESSION_PREFIX);
    const session = await accountStore.insertSession(this.db, {
      userId: found.id,
      tokenHash: digestOf(token),
      expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
    });
    await accountStore.updateUser(this.db, found.id, { lastLoggedIn: now }, now);
    this.users.forget(found.id);
    const [user] = await this.users.usersByIds([found.id]);
    return { token, session, user: user! };
  }

  /** The signed-in user of a session cookie, or undefined when it is unknown, expired or revoked. */
  async sessionOf(token: string | undefined): Promise<{ session: SessionRecord; user: User } | undefined> {
    if (!token) return undefined;
    const session = await accountStore.findLiveSession(this.db, digestOf(token), this.clock.now());
    if (!session) return undefined;
    const [user] = await this.users.usersByIds([session.userId]);
    return user ? { session, user } : undefined;
  }

  async signOut(sessionId: string): Promise<void> {
    await accountStore.revokeSession(this.db, sessionId, this.clock.now());
  }

  /** Mails a reset link when the email is known; answers the same either way. */
  async requestPasswordReset(email: string): Promise<void> {
    const found = await accountStore.findCredentials(this.db, email);
    if (!found) return;
    const link = await this.newLink(found.id, 'reset_password', RESET_LINK_TTL_MS);
    await this.mailer.send({
      to: email.trim(),
      subject: 'Reset your Partner Gateway password',
      text: `Choose a new password by opening this link (valid for 1 hour, once):\n\n${this.publicUrl}/reset-password?token=${link}\n\nIf you did not ask for this, ignore this message: your password stays as it is.\n`,
    });
  }

  /**
   * Sets the new password, signs out every session, and counts the email as verified (the link proved it).
   * `origin`: the request's, for the audit record (an anonymous actor unless it names one).
   */
  async resetPassword(token: string, password: string, origin?: AuditOrigin): Promise<void> {
    const checked = checkPassword(password);
    const passwordHash = await hashSecret(checked);
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      const userId = await accountStore.useToken(tx, 'reset_password', digestOf(token), now);
      if (!userId) throw badInput('token', 'This reset link is invalid, used or expired. Ask for a new one.');
      await accountStore.updateUser(tx, userId, { passwordHash, verified: true }, now);
      await accountStore.revokeSessionsOf(tx, userId, now);
      await recordAudit(
        tx,
        {
          userId,
          environment: null,
          action: 'account.password_reset',
          targetType: 'user',
          targetId: userId,
          changes: { password: { changed: true }, sessions: { to: 'all signed out' } },
          origin,
        },
        now,
      );
      this.users.forget(userId);
    });
  }

  /**
   * Sets the transaction PIN; changing an existing one needs the current PIN. `origin`: the
   * request's, with its actor (the dashboard session), for the audit record.
   */
  async setTransactionPin(
    userId: string,
    pin: string,
    currentPin?: string | null,
    origin?: AuditOrigin,
  ): Promise<User> {
    const checked = checkPin(pin);
    const secrets = await accountStore.findSecretsOf(this.db, userId);
    if (secrets?.transactionPinHash) {
      if (!currentPin) throw badInput('currentPin', 'currentPin is required to change the transaction PIN.');
      if (!(await verifySecret(secrets.transactionPinHash, currentPin)))
        throw badInput('currentPin', 'currentPin is wrong.');
    }
    const pinHash = await hashSecret(checked);
    await this.db.transaction(async (tx) => {
      await accountStore.updateUser(tx, userId, { transactionPinHash: pinHash }, this.clock.now());
      await recordAudit(
        tx,
        {
          userId,
          environment: null,
          action: secrets?.transactionPinHash ? 'account.pin_changed' : 'account.pin_set',
          targetType: 'user',
          targetId: userId,
          changes: { transactionPin: { changed: true } },
          origin,
        },
        this.clock.now(),
      );
    });
    this.users.forget(userId);
    const [user] = await this.users.usersByIds([userId]);
    return user!;
  }

  private async newLink(userId: string, purpose: 'verify_email' | 'reset_password', ttlMs: number): Promise<string> {
    const now = this.clock.now();
    const token = newOpaqueToken(LINK_PREFIX);
    await this.db.transaction(async (tx) => {
      await accountStore.expireTokensOf(tx, userId, purpose, now);
      await accountStore.insertToken(tx, {
        userId,
        purpose,
        tokenHash: digestOf(token),
        expiresAt: new Date(now.getTime() + ttlMs),
      });
    });
    return token;
  }
}
