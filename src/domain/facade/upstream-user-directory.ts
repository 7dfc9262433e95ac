import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AnswerOf } from '../upstream/answer-shape.js';
import type { Business, User } from '../users/user.js';
import type { Caller, CallerCredential, UserDirectory } from '../users/user-directory.js';
import { DomainError } from '../errors.js';
import { notInFacade } from './not-in-facade.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { askUpstream } from './upstream-json.js';
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
    const answer = await askUpstream(
      this.upstream,
      { method: 'GET', path: '/api/v1/user/me', credential, maxAnswerBytes: MAX_ANSWER_BYTES },
      UserAnswer,
    );
    return toUser(answer.value.data);
  }
}

/** The cache key of a credential: its scheme and a SHA-256 of its value (a key is never held as itself). */
export function credentialHash({ scheme, value }: CallerCredential): string {
  return createHash('sha256').update(`${scheme}\0${value}`).digest('base64url');
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
