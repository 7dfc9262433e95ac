import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { ApiKeyService } from './domain/auth/api-key-service.js';
import type { Clock } from './domain/clock.js';
import { EventService } from './domain/events/event-service.js';
import { UserService } from './domain/users/user-service.js';

/** Every domain service, built once per process and shared by GraphQL, REST and the workers. */
export interface Services {
  config: Config;
  db: Database;
  clock: Clock;
  users: UserService;
  apiKeys: ApiKeyService;
  events: EventService;
}

export function createServices(config: Config, db: Database, clock: Clock, onBackgroundError: (e: unknown) => void): Services {
  return {
    config,
    db,
    clock,
    users: new UserService(db),
    apiKeys: new ApiKeyService(db, clock, config.API_KEY_CACHE_MS, onBackgroundError),
    events: new EventService(db),
  };
}
