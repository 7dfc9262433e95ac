/**
 * Server side of `npm run bench:quotes`: the gateway with one sandbox user whose wallet the faucet
 * funded, so quotes read real pool reserves and balances. Prints one JSON line when ready.
 */
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';

const config = loadConfig(process.env, {
  LOG_LEVEL: 'silent',
  SEED_DEMO: false,
  WORKERS: false,
  RATE_LIMIT_PER_MINUTE: 1_000_000_000,
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: 1_000_000_000,
});
const database = await openDatabase(
  config.DATABASE_URL ? { databaseUrl: config.DATABASE_URL } : { pgliteDataDir: 'memory://' },
);
const services = createServices(config, database.db, systemClock, () => undefined);
const user = await services.users.createUser({ email: `quotes-bench-${Date.now()}@example.test` });
const { key } = await services.apiKeys.create({
  userId: user.id,
  name: 'bench',
  environment: 'sandbox',
  permission: 'READ_ONLY',
});
const principal = {
  kind: 'api_key' as const,
  credentialId: 'bench',
  userId: user.id,
  environment: 'sandbox' as const,
  abilities: new Set(['READ', 'TRANSACT'] as const),
};
await services.sandboxFaucet.fund(principal, {});
const app = await buildApp({ services });
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(
  `${JSON.stringify({ ready: true, pid: process.pid, port: (app.server.address() as { port: number }).port, key })}\n`,
);
