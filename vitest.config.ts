import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/**
 * The suite runs on embedded PGlite always, and again on PostgreSQL when DATABASE_URL is set
 * (in a database of its own, made by test/setup/postgres.ts). Files named *.pg.test.ts need real
 * concurrent connections, which PGlite cannot give: they run in the PostgreSQL project only,
 * and show as skipped when DATABASE_URL is unset.
 */
const withPostgres = Boolean(process.env.DATABASE_URL);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS (main) and ESM (module) builds; Node loads the CJS one for everyone,
    // Vite would pick the ESM one for our code and break instanceof checks against @apollo/*.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    pool: 'forks',
    maxWorkers: 2,
    // Files in one worker share its migrated database (a fresh PGlite costs seconds and most of
    // a GiB); tests stay apart by seeding their own users.
    isolate: false,
    testTimeout: 30_000,
    // Every REST 400 of the suite is checked against the error contract (no GraphQL text).
    setupFiles: ['test/setup/rest-contract.ts'],
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'pglite',
          include: ['test/**/*.test.ts'],
          exclude: withPostgres ? ['test/**/*.pg.test.ts'] : [],
          env: { TEST_DATABASE: 'pglite' },
        },
      },
      ...(withPostgres
        ? [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                include: ['test/**/*.test.ts'],
                // Process tests of the embedded database and browser tests do not depend on the
                // database engine; once is enough.
                exclude: ['test/**/*.embedded.test.ts', 'test/**/*.browser.test.ts'],
                globalSetup: ['test/setup/postgres.ts'],
                env: { TEST_DATABASE: 'postgres' },
              },
            },
          ]
        : []),
    ],
  },
});
