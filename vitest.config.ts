import { createRequire } from 'node:module';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { ENGINE_FREE_FILES } from './test/setup/engine-free.js';

const require = createRequire(import.meta.url);

/**
 * The suite runs on embedded PGlite always, and again on PostgreSQL when DATABASE_URL is set
 * (in a database of its own, made by test/setup/postgres.ts). Files named *.pg.test.ts need real
 * concurrent connections, which PGlite cannot give: they run in the PostgreSQL projects only,
 * and show as skipped when DATABASE_URL is unset.
 *
 * It is built for two cores that other work may be using too. Files run in phases, one after
 * another (vitest's `sequence.groupOrder`): first every in-process file, two at a time, the fuzz
 * suite among them (in-process and CPU-bound like the rest: a phase of its own only added two
 * worker starts, each importing the app and opening its database again); then each heavy suite on
 * its own, so that suites which start server processes, kill databases or drive a browser never
 * compete with each other for the same two cores. Each phase has its own time cap
 * (`testTimeout`). A cap only stops a test that hangs: no verdict depends on wall time (waits are
 * on conditions, see test/helpers/wait.ts), so a slow machine makes a slow run, not a failing one.
 */
const withPostgres = Boolean(process.env.DATABASE_URL);

/** The heavy suites, each its own phase: which files, how many at once, and its cap per test. */
const HEAVY_SUITES = {
  /**
   * Files that start gateway or CLI processes (two at once in the multi-instance files), one file
   * at a time: two at once measured no faster on a shared machine (the same 19 files, 273 s against
   * 260 s one at a time, and a fifth more CPU), the children's starts keeping both cores busy.
   */
  processes: {
    include: [
      'test/ops/{bundle,start,start-output,demo-key,otlp-export}.embedded.test.ts',
      'test/ops/{cli-papercuts,listen,shutdown.pg,slow-provider-shutdown.pg}.test.ts',
      'test/bootstrap/production-defaults.test.ts',
      'test/ledger/app-role.pg.test.ts',
      'test/observability/log-writer.test.ts',
      'test/rest/openapi-examples-recorder.test.ts',
      'test/{bills/schedules,connect/limits-shared,events/subscriptions-shared,protection/rate-limit-shared,webhooks/durability}.pg.test.ts',
    ],
    maxWorkers: 1,
    capMs: 300_000,
  },
  /** Throwaway PostgreSQL servers stopped, killed and failed over; processes killed mid-write. */
  faults: {
    include: [
      'test/ops/{faults,failover,settled-query}.pg.test.ts',
      'test/wallet/crash.pg.test.ts',
      'test/evm/evm-crash.pg.test.ts',
    ],
    maxWorkers: 1,
    capMs: 600_000,
  },
  /** Debian Chromium driving the dashboard and the explorer. */
  browser: { include: ['test/**/*.browser.test.ts'], maxWorkers: 1, capMs: 300_000 },
} as const;

const HEAVY_FILES = Object.values(HEAVY_SUITES).flatMap((suite) => [...suite.include]);

/** Per database engine: what never runs there. */
const ENGINES = [
  { name: 'pglite', excluded: withPostgres ? ['test/**/*.pg.test.ts'] : [], env: { TEST_DATABASE: 'pglite' } },
  ...(withPostgres
    ? [
        {
          name: 'postgres',
          // Process tests of the embedded database and browser tests do not depend on the
          // database engine, nor do the files that never reach the test database (engine-free.ts);
          // once is enough.
          excluded: ['test/**/*.embedded.test.ts', 'test/**/*.browser.test.ts', ...ENGINE_FREE_FILES],
          env: { TEST_DATABASE: 'postgres' },
          globalSetup: ['test/setup/postgres.ts'],
        },
      ]
    : []),
] as const;

function projects(): TestProjectInlineConfiguration[] {
  const list: TestProjectInlineConfiguration[] = [];
  for (const engine of ENGINES) {
    const common = {
      extends: true as const,
      test: { env: engine.env, ...('globalSetup' in engine ? { globalSetup: [...engine.globalSetup] } : {}) },
    };
    list.push({
      ...common,
      test: {
        ...common.test,
        name: engine.name,
        include: ['test/**/*.test.ts'],
        exclude: [...engine.excluded, ...HEAVY_FILES],
        sequence: { groupOrder: 0 },
        maxWorkers: 2,
        testTimeout: 180_000,
        hookTimeout: 180_000,
      },
    });
    Object.entries(HEAVY_SUITES).forEach(([suite, { include, maxWorkers, capMs }], index) => {
      list.push({
        ...common,
        test: {
          ...common.test,
          name: `${engine.name}:${suite}`,
          include: [...include],
          exclude: [...engine.excluded],
          sequence: { groupOrder: index + 1 },
          maxWorkers,
          testTimeout: capMs,
          hookTimeout: capMs,
        },
      });
    });
  }
  return list;
}

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
    // Server processes run the bundle: built once here when the sources changed.
    globalSetup: ['test/setup/server-bundle.ts'],
    // Every REST 400 of the suite is checked against the error contract (no GraphQL text).
    setupFiles: ['test/setup/rest-contract.ts'],
    // No project matches a file more than once: a heavy suite's files are left out of the light phase.
    passWithNoTests: true,
    projects: projects(),
  },
});
