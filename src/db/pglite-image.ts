import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { PGLITE_EXTENSIONS } from './pglite-engine.js';
import { tarEntries } from './tar-entries.js';

/**
 * A migrated embedded database, ready to copy: the data directory PGlite has after initdb and every
 * migration, as a gzipped tar (PGlite's dumpDataDir). A new embedded database starts from it instead
 * of running initdb and replaying every migration, which took seconds on a quiet machine and over a
 * minute on a busy one.
 *
 * An image is named by a hash of what made it: the image format, PGlite's version, the extensions,
 * then each migration in order (its tag, its journal time and its SQL), each link of the chain
 * hashing the one before. A tree whose migrations begin with an image's finds that image, and the
 * migrator applies the newer ones; a migration whose SQL changed changes its own key and every later
 * one, so an image made from other SQL is never found.
 */

/** Bumped when what an image holds changes in a way its key does not see. */
const IMAGE_FORMAT = 1;
/** Images of other migration sets an install's cache keeps (a branch switched back and forth). */
const KEEP = 3;

/** Where a build puts the image of its migrations (dist/src/db/pglite-images beside the copied migrations). */
export const IMAGES_BESIDE_BUILD = resolve(dirname(fileURLToPath(import.meta.url)), 'pglite-images');

/** The folder of the installed PGlite package, found as Node resolves it from here. */
function pglitePackageDir(): string {
  let dir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (manifest.name === '@electric-sql/pglite') return dir;
    } catch {
      // No package.json at this level: look higher.
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the @electric-sql/pglite package');
    dir = parent;
  }
}

export function pgliteVersion(): string {
  return (JSON.parse(readFileSync(join(pglitePackageDir(), 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * The install's cache of images, node_modules/.cache/partner-gateway (where tools keep caches that
 * go with the installed packages: a fresh install starts without one).
 */
export function installCacheDir(): string {
  return join(pglitePackageDir(), '..', '..', '.cache', 'partner-gateway');
}

/** Where the server looks for an image: beside the build first, then the install's cache. */
export function defaultImageDirs(): string[] {
  return [IMAGES_BESIDE_BUILD, installCacheDir()];
}

/** `keys[n]` is the key of an image holding the first n migrations of `folder` (keys[0]: none). */
export function imageKeys(folder: string): string[] {
  const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ tag: string; when: number; breakpoints: boolean }>;
  };
  const hash = (...parts: Array<string | Buffer>) => {
    const h = createHash('sha256');
    for (const part of parts) h.update(part).update('\0');
    return h.digest('hex');
  };
  const keys = [hash(`pglite-image ${IMAGE_FORMAT}`, pgliteVersion(), Object.keys(PGLITE_EXTENSIONS).sort().join(','))];
  for (const entry of journal.entries) {
    const sql = readFileSync(join(folder, `${entry.tag}.sql`));
    keys.push(hash(keys.at(-1)!, entry.tag, String(entry.when), String(entry.breakpoints), sql));
  }
  return keys;
}

export function imageFileName(key: string): string {
  return `pglite-${key.slice(0, 32)}.tar.gz`;
}

export interface FoundImage {
  path: string;
  /** How many of the folder's migrations it holds (the migrator applies the rest). */
  migrations: number;
}

/** The image holding the most of `folder`'s migrations (from their first) in `dirs`, if any. */
export function findImage(folder: string, dirs: readonly string[]): FoundImage | undefined {
  const listed = dirs.map((dir) => {
    try {
      return { dir, names: new Set(readdirSync(dir)) };
    } catch {
      return { dir, names: new Set<string>() };
    }
  });
  const keys = imageKeys(folder);
  for (let migrations = keys.length - 1; migrations > 0; migrations -= 1) {
    const name = imageFileName(keys[migrations]!);
    const holder = listed.find((d) => d.names.has(name));
    if (holder) return { path: join(holder.dir, name), migrations };
  }
  return undefined;
}

/** The tar PGlite loads, from an image file; throws if the file is damaged (gzip checks its CRC). */
export function readImage(path: string): Blob {
  return new Blob([gunzipSync(readFileSync(path))]);
}

/** In a data directory while an image is written into it (see writeImageInto). */
const UNFINISHED = '.image-unfinished';

/** Empties a data directory whose image was being written when its process stopped: every file in it is the image's. */
export function startOverUnfinishedImage(dataDir: string): void {
  if (!existsSync(join(dataDir, UNFINISHED))) return;
  for (const name of readdirSync(dataDir)) rmSync(join(dataDir, name), { recursive: true, force: true });
}

/**
 * Writes an image's files into `dataDir` (an empty folder), as PGlite's own loader would, with
 * Node's file calls: a fraction of the CPU of loading the tar through PGlite's emulated file system.
 * A marker says the writing is unfinished until it is done, and PG_VERSION (which PGlite takes for
 * "a database is here") is written last, so a start cut short is started over, never resumed.
 * Throws on a damaged image (gzip's CRC, the tar's checksums).
 */
export function writeImageInto(path: string, dataDir: string): void {
  const tar = gunzipSync(readFileSync(path));
  const marker = join(dataDir, UNFINISHED);
  writeFileSync(marker, '');
  let version: { path: string; data: Buffer; mode: number } | undefined;
  for (const entry of tarEntries(tar)) {
    const target = join(dataDir, entry.path);
    if (entry.kind === 'folder') mkdirSync(target, { recursive: true, mode: entry.mode });
    else if (entry.path === 'PG_VERSION') version = { path: target, data: entry.data, mode: entry.mode };
    else {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, entry.data, { mode: entry.mode });
    }
  }
  if (!version) throw new Error(`${path} holds no PG_VERSION: not a data directory`);
  writeFileSync(version.path, version.data, { mode: version.mode });
  rmSync(marker);
}

/**
 * Makes the image of `folder`'s migrations into `dir` (initdb and every migration, in memory), and
 * returns its path. Written under a temporary name and renamed, so a reader never sees half a file
 * and two makers at once both leave a whole one; older images beyond the last few are removed.
 */
export async function makeImage(folder: string, dir: string): Promise<string> {
  const [{ createPglite }, { drizzle }, { migrate }] = await Promise.all([
    import('./pglite-engine.js'),
    import('drizzle-orm/pglite'),
    import('drizzle-orm/pglite/migrator'),
  ]);
  const key = imageKeys(folder).at(-1)!;
  const client = await createPglite('memory://');
  let tar: Buffer;
  try {
    await migrate(drizzle(client), { migrationsFolder: folder });
    // Written out now, so a database made from the image has no log of its making to replay.
    await client.exec('checkpoint');
    tar = Buffer.from(await (await client.dumpDataDir('none')).arrayBuffer());
  } finally {
    await client.close();
  }
  mkdirSync(dir, { recursive: true });
  const path = join(dir, imageFileName(key));
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(temporary, gzipSync(tar));
  renameSync(temporary, path);
  pruneImages(dir, path);
  return path;
}

/** Keeps `kept` and the newest few other images in `dir`; removes temporary files an hour old. */
function pruneImages(dir: string, kept: string): void {
  const images: Array<{ path: string; modified: number }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    let modified: number;
    try {
      modified = statSync(path).mtimeMs;
    } catch {
      continue; // removed meanwhile by another maker
    }
    if (name.endsWith('.tmp') && Date.now() - modified > 3_600_000) rmSync(path, { force: true });
    else if (/^pglite-\w+\.tar\.gz$/.test(name) && path !== kept) images.push({ path, modified });
  }
  images.sort((a, b) => b.modified - a.modified);
  for (const old of images.slice(KEEP - 1)) rmSync(old.path, { force: true });
}
