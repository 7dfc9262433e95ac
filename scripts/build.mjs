// Transpiles the server and its operator scripts from TypeScript to JavaScript in dist/, file by
// file (no bundling: node_modules stay as they are), and copies what they read at run time: the
// migrations next to the database client and the GraphQL schema files. dist/ mirrors the repo,
// so `../../schema` from dist/src/graphql is dist/schema, as it is in the sources.
//
//   node scripts/build.mjs        (npm run build)
import { cpSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(ROOT, 'dist');
/** Entry points beside src/ that a production image runs. */
const SCRIPTS = ['scripts/admin.ts', 'scripts/admin-operations.ts', 'scripts/migrate.ts'];
/** Inputs whose change makes dist/ stale. */
export const SOURCES = ['src', 'schema', ...SCRIPTS, 'package.json', 'package-lock.json'];
export const STAMP = join(DIST, '.built');

function tsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

export async function buildDist({ quiet = false } = {}) {
  const started = performance.now();
  rmSync(DIST, { recursive: true, force: true });
  const entryPoints = [...tsFiles(join(ROOT, 'src')), ...SCRIPTS.map((s) => join(ROOT, s))];
  await build({
    entryPoints,
    outdir: DIST,
    outbase: ROOT,
    bundle: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  cpSync(join(ROOT, 'src/db/migrations'), join(DIST, 'src/db/migrations'), { recursive: true });
  cpSync(join(ROOT, 'schema'), join(DIST, 'schema'), { recursive: true });
  mkdirSync(DIST, { recursive: true });
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  if (!quiet)
    console.error(
      `built ${entryPoints.length} files into ${relative(process.cwd(), DIST) || '.'} in ${Math.round(performance.now() - started)} ms`,
    );
}

/** Newest modification time under the given paths (files or folders). */
function newest(paths) {
  let latest = 0;
  const visit = (path) => {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      return;
    }
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else latest = Math.max(latest, stat.mtimeMs);
  };
  for (const path of paths) visit(join(ROOT, path));
  return latest;
}

/** True when dist/ is missing or older than any source (false when there are no sources: an image). */
export function distIsStale() {
  let built;
  try {
    built = statSync(STAMP).mtimeMs;
  } catch {
    return true;
  }
  try {
    statSync(join(ROOT, 'src'));
  } catch {
    return false;
  }
  return newest(SOURCES) > built;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildDist();
