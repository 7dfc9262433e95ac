import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import { type Database, queryRows } from '../../db/client.js';
import { isUuid } from '../ids.js';

/**
 * The id a facade keeps an upstream user's own records under (events, webhook endpoints, the
 * inbound secret): the upstream's id when it is a UUID, as this gateway's and most deployments'
 * are, else a name-based UUID of it (RFC 9562 version 5 layout over SHA-256), always the same
 * for the same upstream id. The spec types a user's `id` only as a string.
 */
export function localOwnerId(upstreamUserId: string): string {
  if (isUuid(upstreamUserId)) return upstreamUserId.toLowerCase();
  const hash = createHash('sha256').update(`partner-gateway upstream user\0${upstreamUserId}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A facade's row for each upstream user it has seen, so its own tables (events, webhook
 * endpoints, inbound secrets), which refer to `users`, can hold that user's records. The row
 * holds no login and no personal data: its email is a placeholder under `.invalid` (RFC 2606),
 * and the user's details are always asked of the upstream. Written once per user per process.
 */
export class LocalOwners {
  private readonly known = new LRUCache<string, true>({ max: 10_000 });

  constructor(private readonly db: Database) {}

  async ensure(userId: string): Promise<void> {
    if (this.known.has(userId)) return;
    await queryRows(
      this.db,
      sql`insert into users (id, email) values (${userId}::uuid, ${`${userId}@upstream-user.invalid`})
        on conflict do nothing`,
    );
    this.known.set(userId, true);
  }
}

/**
 * A facade's authenticator that also makes sure the caller's user has its row (LocalOwners). A
 * failure to write it is not the caller's: the fields the upstream answers still run, and the
 * row is tried again on the next request.
 */
export function withLocalOwner<Args extends unknown[], P extends { userId: string } | undefined>(
  authenticate: (...args: Args) => Promise<P>,
  owners: LocalOwners,
): (...args: Args) => Promise<P> {
  return async (...args) => {
    const principal = await authenticate(...args);
    if (principal) await owners.ensure(principal.userId).catch(() => undefined);
    return principal;
  };
}
