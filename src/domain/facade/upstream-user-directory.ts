import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AnswerOf } from '../upstream/answer-shape.js';
import type { Business, User } from '../users/user.js';
import type { Caller, CallerCredential, UserDirectory } from '../users/user-directory.js';
import { DomainError } from '../errors.js';
import { notInFacade } from './not-in-facade.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { statusOutcome, transportFault } from './upstream-outcomes.js';
import { UserAnswer } from './user-answer.js';

/** Largest `GET /user/me` answer read: a user is a few hundred bytes. */
const MAX_ANSWER_BYTES = 256 * 1024;

/**
 * The user domain of a facade: the upstream's `GET /api/v1/user/me`, asked with the caller's own
 * credential. Whose key it is is kept briefly (API_KEY_CACHE_MS, as the service's own keys are),
 * under a SHA-256 of the credential, never the credential itself; concurrent askers with the same
 * credential share one upstream call. Failures are not kept.
 */
export class UpstreamUserDirectory implements UserDirectory {
  private readonly known: LRUCache<string, User>;
  private readonly asking = new Map<string, Promise<User>>();

  constructor(
    private readonly upstream: RestV1Upstream,
    cacheTtlMs: number,
  ) {
    this.known = new LRUCache({ max: 10_000, ttl: Math.max(cacheTtlMs, 1) });
  }

  currentUser({ credential }: Caller): User | Promise<User> {
    if (!credential) throw new DomainError('UNAUTHENTICATED', 'Authentication required.');
    return this.userOf(credential);
  }

  ownedBusinesses(): Promise<Business[]> {
    return Promise.reject(notInFacade('User.businesses'));
  }

  /** The user a credential acts for, as the upstream says: learned once per cache period. */
  userOf(credential: CallerCredential): User | Promise<User> {
    // Per client address too: an upstream with IP allow-lists may answer one key differently by address.
    const key = `${credentialHash(credential)} ${credential.clientIp ?? ''}`;
    const known = this.known.get(key);
    if (known) return known;
    let asking = this.asking.get(key);
    if (!asking) {
      asking = this.ask(credential)
        .then((user) => {
          this.known.set(key, user);
          return user;
        })
        .finally(() => this.asking.delete(key));
      this.asking.set(key, asking);
    }
    return asking;
  }

  private async ask(credential: CallerCredential): Promise<User> {
    const answer = await this.upstream.send({
      method: 'GET',
      path: '/api/v1/user/me',
      headers: {
        accept: 'application/json',
        ...credentialHeader(credential),
        ...(credential.clientIp ? { 'x-forwarded-for': credential.clientIp } : {}),
      },
    });
    const text = await readText(answer.body).catch((cause: unknown) => {
      throw this.upstream.fault(transportFault(cause, false), cause);
    });
    if (answer.status < 200 || answer.status > 299) {
      const outcome = statusOutcome(answer.status, header(answer.headers['retry-after']));
      throw typeof outcome === 'string' ? this.upstream.fault(outcome) : outcome;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw this.upstream.fault('bad_answer', undefined, '/');
    }
    const mismatch = UserAnswer.mismatchAt(parsed);
    if (mismatch !== undefined) throw this.upstream.fault('bad_answer', undefined, mismatch);
    return toUser((parsed as AnswerOf<typeof UserAnswer>).data);
  }
}

/** The cache key of a credential: its scheme and a SHA-256 of its value (a key is never held as itself). */
export function credentialHash({ scheme, value }: CallerCredential): string {
  return createHash('sha256').update(`${scheme}\0${value}`).digest('base64url');
}

/** The credential forwarded in the header it came in. */
export function credentialHeader({ scheme, value }: CallerCredential): Record<string, string> {
  return scheme === 'bearer' ? { authorization: `Bearer ${value}` } : { 'x-api-key': value };
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readText(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    // The rest is dropped: an answer this large is no user, and reading it would cost the facade.
    if (size > MAX_ANSWER_BYTES) return '';
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

type UserData = AnswerOf<typeof UserAnswer>['data'];

function toUser(data: UserData): User {
  const date = (value: string | null | undefined) => (value ? new Date(value) : null);
  return {
    id: data.id,
    createdAt: new Date(data.createdAt),
    updatedAt: new Date(data.updatedAt),
    deletedDate: date(data.deletedDate),
    email: data.email,
    phone: data.phone ?? null,
    firstName: data.firstName ?? null,
    lastName: data.lastName ?? null,
    haveTransactionPin: data.haveTransactionPin,
    verified: data.verified,
    dob: data.dob ?? null,
    isAdmin: data.isAdmin,
    deviceId: data.deviceId ?? null,
    deviceIp: data.deviceIp ?? null,
    deviceModel: data.deviceModel ?? null,
    platform: data.platform ?? null,
    lastLoggedIn: date(data.lastLoggedIn),
    ...(typeof data.name === 'string' ? { name: data.name } : {}),
  };
}
