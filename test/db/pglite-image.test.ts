import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DatabaseHandle, openDatabase, queryRows } from '../../src/db/client.js';
import { MIGRATIONS_FOLDER } from '../../src/db/migrations-folder.js';
import { findImage, imageFileName, imageKeys, makeImage } from '../../src/db/pglite-image.js';
import { sql } from 'drizzle-orm';

/**
 * A new embedded database starts from a migrated image (src/db/pglite-image.ts) instead of
 * replaying every migration: only an image of exactly this tree's migrations (or of their first n)
 * is used, the migrator applies what is newer, and an image that cannot be used is set aside.
 */
describe('the migrated image of the embedded database', () => {
  const work = mkdtempSync(join(tmpdir(), 'pgw-image-'));
  const all = imageKeys(MIGRATIONS_FOLDER).length - 1;
  const images = join(work, 'images');
  let image = '';
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** A copy of the migrations: without the last `drop`, or with the last one's SQL changed. */
  const migrationsCopy = (name: string, change: { drop?: number; editLast?: boolean }) => {
    const folder = join(work, name);
    cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
    const journalPath = join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: Array<{ tag: string }> };
    journal.entries = journal.entries.slice(0, journal.entries.length - (change.drop ?? 0));
    writeFileSync(journalPath, JSON.stringify(journal));
    if (change.editLast) {
      const last = join(folder, `${journal.entries.at(-1)!.tag}.sql`);
      writeFileSync(
        last,
        `${readFileSync(last, 'utf8')}\n--> statement-breakpoint\ncreate table stale_marker (id int);`,
      );
    }
    return folder;
  };

  const count = async (database: DatabaseHandle) =>
    (await queryRows<{ n: number }>(database.db, sql`select count(*)::int as n from drizzle.__drizzle_migrations`))[0]!
      .n;

  beforeAll(async () => {
    image = await makeImage(MIGRATIONS_FOLDER, images);
  });

  it('names an image by every migration before it: a changed one changes its own key and all later ones', () => {
    const keys = imageKeys(MIGRATIONS_FOLDER);
    const edited = imageKeys(migrationsCopy('edited', { editLast: true }));
    expect(edited.slice(0, -1)).toEqual(keys.slice(0, -1));
    expect(edited.at(-1)).not.toBe(keys.at(-1));
    expect(imageKeys(migrationsCopy('shorter', { drop: 1 }))).toEqual(keys.slice(0, -1));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('never finds an image made from other SQL', () => {
    const edited = migrationsCopy('edited-find', { editLast: true });
    // The image of the tree's migrations, seen from a tree whose last migration says something else:
    // the image of the first all-1 would do, but there is none.
    expect(findImage(edited, [images])).toBeUndefined();
    // And an image of the edited SQL, seen from the tree: never.
    const staleDir = join(work, 'stale-images');
    mkdirSync(staleDir);
    writeFileSync(join(staleDir, imageFileName(imageKeys(edited).at(-1)!)), 'not used');
    expect(findImage(MIGRATIONS_FOLDER, [staleDir])).toBeUndefined();
    expect(findImage(MIGRATIONS_FOLDER, [staleDir, images])).toEqual({ path: image, migrations: all });
  });

  it('starts a new data directory from the image, with every migration applied; an existing one is opened as it is', async () => {
    const dataDir = join(work, 'fresh');
    const database = await openDatabase({ pgliteDataDir: dataDir, pgliteImageDirs: [images] });
    try {
      expect(database.describe).toBe(`PGlite ${dataDir}, made from ${image} (${all} migrations)`);
      expect(await count(database)).toBe(all);
      expect(await queryRows(database.db, sql`select id from users limit 1`)).toEqual([]);
      expect(existsSync(join(dataDir, '.image-unfinished'))).toBe(false);
    } finally {
      await database.close();
    }
    const again = await openDatabase({ pgliteDataDir: dataDir, pgliteImageDirs: [images] });
    try {
      expect(again.describe).toBe(`PGlite ${dataDir}`);
      expect(await count(again)).toBe(all);
    } finally {
      await again.close();
    }
  });

  it('starts from the image of the older migrations and applies the newer one', async () => {
    const older = join(work, 'older-images');
    const olderImage = await makeImage(migrationsCopy('older', { drop: 1 }), older);
    const database = await openDatabase({ pgliteDataDir: 'memory://', pgliteImageDirs: [older] });
    try {
      expect(database.describe).toBe(`PGlite (in memory), made from ${olderImage} (${all - 1} migrations)`);
      expect(await count(database)).toBe(all);
    } finally {
      await database.close();
    }
  });

  it('starts over a data directory whose image was being written when its process stopped', async () => {
    const dataDir = join(work, 'cut-short');
    mkdirSync(join(dataDir, 'base', '1'), { recursive: true });
    writeFileSync(join(dataDir, '.image-unfinished'), '');
    writeFileSync(join(dataDir, 'base', '1', 'half-written'), 'x');
    const database = await openDatabase({ pgliteDataDir: dataDir, pgliteImageDirs: [images] });
    try {
      expect(database.describe).toBe(`PGlite ${dataDir}, made from ${image} (${all} migrations)`);
      expect(existsSync(join(dataDir, 'base', '1', 'half-written'))).toBe(false);
      expect(await count(database)).toBe(all);
    } finally {
      await database.close();
    }
  });

  it('sets a damaged image aside: what it wrote is removed and the database is made from its migrations', async () => {
    // Whole gzip, but the tar inside cut in the middle: some files are written before the end is missed.
    const damaged = join(work, 'damaged-images');
    mkdirSync(damaged);
    const tar = gunzipSync(readFileSync(image));
    writeFileSync(
      join(damaged, imageFileName(imageKeys(MIGRATIONS_FOLDER).at(-1)!)),
      gzipSync(tar.subarray(0, tar.length / 2)),
    );
    const dataDir = join(work, 'from-damaged');
    let said = '';
    const told = vi.spyOn(process.stderr, 'write').mockImplementation((line) => {
      said += String(line);
      return true;
    });
    const database = await openDatabase({ pgliteDataDir: dataDir, pgliteImageDirs: [damaged] }).finally(() =>
      told.mockRestore(),
    );
    try {
      expect(said).toMatch(
        /the image .* could not be used \(tar: .* is cut short\); making the database from its migrations instead/,
      );
      expect(database.describe).toBe(`PGlite ${dataDir}`);
      expect(await count(database)).toBe(all);
      expect(readdirSync(dataDir)).not.toContain('.image-unfinished');
    } finally {
      await database.close();
    }
  });
});
