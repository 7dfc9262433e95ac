import pg from 'pg';
import type { Database } from './client.js';

/**
 * Whether `db` is the embedded database (PGlite), which only this process opens: nothing written
 * elsewhere needs finding, so a loop that looks for other processes' writes need not run on it.
 */
export function isEmbeddedDatabase(db: Database): boolean {
  return !((db as unknown as { $client?: unknown }).$client instanceof pg.Pool);
}
