import type { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

/**
 * The extensions every embedded database is opened with. pg_trgm backs the partial-match searches of
 * bill records and transactions (migration 0006), btree_gin lets their indexes begin with the owner
 * (migration 0034). Their names are part of a migrated image's key
 * (pglite-image.ts): an image made with other extensions is not this database's.
 */
export const PGLITE_EXTENSIONS = { btree_gin, pg_trgm };

/**
 * PostgreSQL's default 128 MB of shared buffers lives in PGlite's WebAssembly memory, which only
 * grows: it was over a quarter of the embedded default's idle footprint. The embedded database is
 * one connection on a local disk whose pages the OS caches anyway, so 16 MB serves it. Each start
 * also zeroes the whole pool in WebAssembly (PostgreSQL's memset, run by the baseline compiler):
 * at 32 MB that was about a tenth of a second of every start's main thread, at 16 MB half that.
 */
const PGLITE_SETTINGS = ['-c', 'shared_buffers=16MB'];

/**
 * Starts PGlite on `dataDir` (a folder, or memory://) as the gateway runs it: on the files there, or
 * on a new database made from `loadDataDir` (a tar of a data directory) or else by initdb. PGlite's
 * own module is loaded here, so a module that only names the extensions stays light.
 */
export async function createPglite(dataDir: string, loadDataDir?: Blob): Promise<PGlite> {
  const { PGlite } = await import('@electric-sql/pglite');
  return PGlite.create(dataDir, {
    extensions: PGLITE_EXTENSIONS,
    startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS],
    ...(loadDataDir ? { loadDataDir } : {}),
  });
}
