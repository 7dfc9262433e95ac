import type { Database } from '../../db/client.js';
import { badInput, DomainError } from '../errors.js';
import type { Business, NewUser, User } from './user.js';
import { userStore } from './user-store.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class UserService {
  constructor(private readonly db: Database) {}

  async createUser(input: NewUser): Promise<User> {
    if (!EMAIL.test(input.email.trim())) throw badInput('email', 'email must be a valid email address.');
    if (await userStore.findUserByEmail(this.db, input.email)) {
      throw new DomainError('CONFLICT', `A user with email ${input.email} already exists.`, { field: 'email' });
    }
    return userStore.insertUser(this.db, input);
  }

  async usersByIds(ids: readonly string[]): Promise<User[]> {
    return userStore.findUsersByIds(this.db, ids);
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

  async businessesOf(ownerUserId: string): Promise<Business[]> {
    return userStore.findBusinessesByOwner(this.db, ownerUserId);
  }
}
