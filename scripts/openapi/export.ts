/**
 * Writes the OpenAPI document the gateway serves at /api/v1/openapi.json, with the default
 * configuration (servers: http://localhost:4000), to clients/openapi.json: the input of the
 * generated clients (clients/typescript) and of Redocly's lint in CI. test/rest/openapi.test.ts
 * checks that the served document and the file are the same.
 *
 *   npm run clients   (this, then the TypeScript clients)
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices } from '../../src/services.js';

const OUTPUT = fileURLToPath(new URL('../../clients/openapi.json', import.meta.url));

const config = loadConfig({}, { NODE_ENV: 'test', LOG_LEVEL: 'silent', SEED_DEMO: false, WORKERS: false });
const database = await openDatabase({ pgliteDataDir: 'memory://' });
const app = await buildApp({
  services: createServices(config, database.db, systemClock, () => undefined),
  logger: false,
});
try {
  const response = await app.inject({ url: '/api/v1/openapi.json' });
  if (response.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${response.statusCode}.`);
  writeFileSync(OUTPUT, `${JSON.stringify(response.json(), null, 2)}\n`);
} finally {
  await app.close();
  await database.close();
}
