import { LRUCache } from 'lru-cache';
import type { Database } from '../../db/client.js';
import { badInput, DomainError, notFound } from '../errors.js';
import type { Business, NewUser, User } from './user.js';
import type { Caller, UserDirectory } from './user-directory.js';
import { userStore } from './user-store.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class UserService implements UserDirectory {
  /**
   * Users by id for a second: `me` runs on almost every request, and an embedded-database query
   * costs more CPU than the rest of the request. Whatever updates a user calls `forget`, and other
   * instances show the change within the TTL.
   */
  private readonly cache: LRUCache<string, User>;
  /**
   * Reads of one user already on their way: when the cached user expires, every request then in
   * flight for it (32 at a time under load) waits for one read instead of sending its own.
   */
  private readonly loading = new Map<string, Promise<User | undefined>>();

  constructor(
    private readonly db: Database,
    cacheTtlMs = 1000,
  ) {
    this.cache = new LRUCache({ max: 10_000, ttl: Math.max(cacheTtlMs, 1) });
  }

  async createUser(input: NewUser): Promise<User> {
    if (!EMAIL.test(input.email.trim())) throw badInput('email', 'email must be a valid email address.');
    if (await userStore.findUserByEmail(this.db, input.email)) {
      throw new DomainError('CONFLICT', `A user with email ${input.email} already exists.`, { field: 'email' });
    }
    return userStore.insertUser(this.db, input);
  }

  /** The cached user with this id, if any: lets a caller answer without waiting when it can. */
  cachedUser(id: string): User | undefined {
    return this.cache.get(id);
  }

  /** The principal's own user: its id came from this database, so only a deleted user is missing. */
  currentUser({ principal }: Caller): User | Promise<User> {
    return this.cache.get(principal.userId) ?? this.loadUser(principal.userId);
  }

  ownedBusinesses(_caller: Caller, user: User): Promise<Business[]> {
    return this.businessesOf(user.id);
  }

  private async loadUser(id: string): Promise<User> {
    let loading = this.loading.get(id);
    if (!loading) {
      loading = this.usersByIds([id]).then(
        ([user]) => {
          if (this.loading.get(id) === loading) this.loading.delete(id);
          // Forgotten while reading: what it read (and cached) may predate the change.
          else this.cache.delete(id);
          return user;
        },
        (error: unknown) => {
          if (this.loading.get(id) === loading) this.loading.delete(id);
          throw error;
        },
      );
      this.loading.set(id, loading);
    }
    const user = await loading;
    if (!user) throw notFound('User');
    return user;
  }

  forget(userId: string): void {
    this.cache.delete(userId);
    // A read begun before the change must not answer requests begun after it.
    this.loading.delete(userId);
  }

  async usersByIds(ids: readonly string[]): Promise<User[]> {
    const cached = ids.map((id) => this.cache.get(id)).filter((u): u is User => u !== undefined);
    const missing = ids.filter((id) => !this.cache.has(id));
    if (missing.length === 0) return cached;
    const loaded = await userStore.findUsersByIds(this.db, missing);
    for (const user of loaded) this.cache.set(user.id, user);
    return [...cached, ...loaded];
  }

  async userByEmail(email: string): Promise<User | undefined> {
    return userStore.findUserByEmail(this.db, email);
  }

  async hasAnyUser(): Promise<boolean> {
    return (await userStore.countUsers(this.db)) > 0;
  }

  async createBusiness(ownerUserId: string, name: string): Promise<Business> {
    if (name.trim() === '') throw badInput('name', 'name must not be empty.');
    return userStore.insertBusiness(this.db, ownerUserId, name);
  }

  async ownedBusinessesByIds(ownerUserId: string, ids: readonly string[]): Promise<Business[]> {
    return userStore.findOwnedBusinessesByIds(this.db, ownerUserId, ids);
  }

  async businessesOf(ownerUserId: string): Promise<Business[]> {
    return userStore.findBusinessesByOwner(this.db, ownerUserId);
  }
}
