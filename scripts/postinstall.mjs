// After `npm install` or `npm ci` (npm runs this project's own install scripts; it skips its
// dependencies'): makes the migrated image of the embedded database for this tree's migrations in
// node_modules/.cache/partner-gateway (scripts/pglite-image.ts), so the first `npm start` copies a
// ready database instead of replaying every migration. It never fails the install: without an
// image the database is made from its migrations, as it always could be.
//
//   node scripts/postinstall.mjs      (package.json's postinstall)
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const made = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/pglite-image.ts'], {
  cwd: ROOT,
  stdio: ['ignore', 'inherit', 'inherit'],
  // A stuck maker must not hold the install: the first start migrates instead.
  timeout: 180_000,
});
if (made.status !== 0)
  console.error(
    `embedded database image not made (${made.error?.message ?? `exit ${made.status ?? made.signal}`}); the first start will run the migrations instead`,
  );
