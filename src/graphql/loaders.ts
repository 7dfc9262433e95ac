import DataLoader from 'dataloader';
import type { User } from '../domain/users/user.js';
import type { Services } from '../services.js';

/** Per-request batching: one query per kind of lookup, however many fields ask. */
export function createLoaders(services: Services) {
  return {
    userById: new DataLoader<string, User | null>(async (ids) => {
      const found = new Map((await services.users.usersByIds(ids)).map((u) => [u.id, u]));
      return ids.map((id) => found.get(id) ?? null);
    }),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;
