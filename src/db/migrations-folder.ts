import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This release's migrations: beside the database client in the sources, and copied beside it in dist/. */
export const MIGRATIONS_FOLDER = resolve(dirname(fileURLToPath(import.meta.url)), 'migrations');
