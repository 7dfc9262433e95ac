/**
 * Makes sure the install's cache holds the migrated image of the embedded database for this tree's
 * migrations (see src/db/pglite-image.ts), making it when it is missing, and copies it into
 * `--into` when given:
 *
 *   node --import tsx scripts/pglite-image.ts             (after npm install: scripts/postinstall.mjs)
 *   node dist/scripts/pglite-image.js --into <folder>     (the build, into dist/src/db/pglite-images)
 *
 * With a cache it cannot write (a read-only node_modules), the image is made straight into `--into`.
 * `--cache <folder>` names another cache (the start-up bench times a making there). Prints one line:
 * the image, whether it was found or made, and the time and CPU that took.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { MIGRATIONS_FOLDER } from '../src/db/migrations-folder.js';
import { imageFileName, imageKeys, installCacheDir, makeImage } from '../src/db/pglite-image.js';

const { values } = parseArgs({ options: { into: { type: 'string' }, cache: { type: 'string' } } });
const started = performance.now();
const keys = imageKeys(MIGRATIONS_FOLDER);
const name = imageFileName(keys.at(-1)!);
const cache = values.cache ?? installCacheDir();

let source = join(cache, name);
let made = false;
if (!existsSync(source)) {
  try {
    source = await makeImage(MIGRATIONS_FOLDER, cache);
  } catch (error) {
    if (!values.into || !['EACCES', 'EPERM', 'EROFS'].includes((error as NodeJS.ErrnoException).code ?? ''))
      throw error;
    source = await makeImage(MIGRATIONS_FOLDER, values.into);
  }
  made = true;
}
if (values.into && !existsSync(join(values.into, name))) {
  mkdirSync(values.into, { recursive: true });
  copyFileSync(source, join(values.into, name));
}
const cpu = process.cpuUsage();
console.error(
  `embedded database image of ${keys.length - 1} migrations ${made ? 'made' : 'found'}: ${relative(process.cwd(), source)} (${Math.round(performance.now() - started)} ms, CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms)`,
);
