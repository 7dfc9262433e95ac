// Transpiles the server and its operator scripts from TypeScript to JavaScript in dist/, file by
// file, and copies what they read at run time: the migrations next to the database client and the
// GraphQL schema files. dist/ mirrors the repo, so `../../schema` from dist/src/graphql is
// dist/schema, as it is in the sources. The server's entry (dist/src/main.js) and the operator
// commands' (dist/scripts/admin.js, dist/scripts/migrate.js) are then replaced by a bundle of them and
// the packages they import: Node loads a few files instead of ~1,500 ES modules, which was most of
// the CPU of starting (see BUNDLE_EXTERNAL for what stays a package import).
//
//   node scripts/build.mjs        (npm run build)
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
/**
 * esbuild's JS API, loaded by the first build (see stopped): `npm start` with dist/ up to date only
 * checks staleness, and importing esbuild was most of that check's 90 ms.
 */
let build;
let stop;

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(ROOT, 'dist');
/**
 * Entry points beside src/ that a production image runs (`node dist/scripts/admin.js`,
 * `node dist/scripts/migrate.js`), bundled with the server's entry: the image has no sources, so a
 * file-by-file copy needs every module they import compiled too (scripts/admin/*.ts once was not),
 * and a bundle starts on a third of the CPU tsx took (docs/production.md, operator commands).
 */
const SCRIPTS = ['scripts/admin.ts', 'scripts/migrate.ts'];
/** What the scripts import from beside src/ (carried by the bundle; listed so a change makes dist/ stale). */
const SCRIPT_IMPORTS = ['scripts/admin-operations.ts', 'scripts/admin'];
/** Inputs whose change makes dist/ stale. */
export const SOURCES = ['src', 'schema', ...SCRIPTS, ...SCRIPT_IMPORTS, 'package.json', 'package-lock.json'];
export const STAMP = join(DIST, '.built');

/**
 * Packages the bundle leaves to Node: native addons, packages that find files of their own beside
 * their code (PGlite's WebAssembly and data, Swagger UI's and GraphiQL's assets, pino's worker
 * threads) and optional native helpers that are absent.
 */
const BUNDLE_EXTERNAL = [
  '@electric-sql/pglite',
  '@node-rs/argon2',
  'litesvm',
  'pino',
  'thread-stream',
  'pino-pretty',
  '@fastify/swagger-ui',
  'graphiql',
  'pg-native',
  'bufferutil',
  'utf-8-validate',
  // Native-binding loaders find their .node files from their own path on disk.
  'bindings',
  'bigint-buffer',
];

/**
 * In the bundle, `import.meta.url` is the bundle file's, not the source file's: a module that finds
 * files beside itself (migrations, the SDL) gets the URL its transpiled copy has in dist/ instead,
 * computed from the output file, which is one folder below dist/ (dist/src/main.js or dist/chunks/*).
 */
const sourceUrls = {
  name: 'source-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\/src\/.*\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const own = relative(ROOT, args.path).replace(/\\/g, '/').replace(/\.ts$/, '.js');
      return {
        contents: text.replaceAll('import.meta.url', `new globalThis.URL(${JSON.stringify(own)}, __pgwDist).href`),
        loader: 'ts',
      };
    });
  },
};

/**
 * web3.js v1 requires node-fetch (and through it whatwg-url and tr46's Unicode tables, about 0.4 MB
 * evaluated at start) only as a fallback for runtimes without a global fetch; on Node 20 it calls
 * globalThis.fetch, and the gateway gives its Connection a fetch of its own anyway (rpc-chain.ts).
 * In the bundle that require resolves to a module handing over the global fetch.
 */
const web3GlobalFetch = {
  name: 'web3-global-fetch',
  setup(build) {
    build.onResolve({ filter: /^node-fetch$/ }, (args) =>
      args.importer.includes('/@solana/web3.js/') ? { path: 'node-fetch', namespace: 'global-fetch' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'global-fetch' }, () => ({
      contents:
        'const fetch = (...args) => globalThis.fetch(...args); module.exports = fetch; module.exports.default = fetch;',
      loader: 'js',
    }));
  },
};

/**
 * `import()` of a CommonJS module: Node hands back its exports object as `default` and, as named
 * exports, the names its CommonJS lexer finds in the source; the chunk esbuild makes for such an
 * import (`export default require_x();`) exports only `default`. @fastify/cookie reads
 * `(await import('cookie')).stringifySetCookie`: in the bundle that was undefined, and every
 * response setting a cookie (sign-in, sign-up, the dashboard) answered 500 while the sources, run
 * by tsx, worked. Each such chunk is given the names Node would give, found with the lexer Node
 * itself uses. (Done on the output, named by the metafile: a resolve hook sees every import of the
 * build, and its round trips to JavaScript made the build 1.3 s slower.)
 */
async function nameCommonJsChunkExports(metafile, outbase) {
  for (const [output, meta] of Object.entries(metafile.outputs)) {
    if (!meta.entryPoint || meta.exports.length !== 1 || meta.exports[0] !== 'default') continue;
    if (metafile.inputs[meta.entryPoint]?.format !== 'cjs') continue;
    const file = resolve(outbase, output);
    const text = readFileSync(file, 'utf8');
    const last = [...text.matchAll(/export default (require_[\w$]+)\(\);/g)].at(-1);
    if (!last) throw new Error(`${output}: a CommonJS chunk whose default export is not require_x()`);
    const names = [...(await commonJsExportNames(resolve(outbase, meta.entryPoint)))].filter(
      (name) => name !== 'default',
    );
    // As Node reads them: own properties only, and a getter that throws gives undefined.
    const bindings = names.map((name, i) => `__pgwExports${i} = __pgwOwn(__pgwExports, ${JSON.stringify(name)})`);
    const list = names.map((name, i) => `__pgwExports${i} as ${JSON.stringify(name)}`);
    const own =
      'function __pgwOwn(o, k) { try { return Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined; } catch { return undefined; } }';
    const named = `${own} var __pgwExports = ${last[1]}()${bindings.map((b) => `, ${b}`).join('')}; export { __pgwExports as default${list.map((l) => `, ${l}`).join('')} };`;
    writeFileSync(file, text.slice(0, last.index) + named + text.slice(last.index + last[0].length));
  }
}

/** Whether Node loads `file` as CommonJS: .cjs, or .js in a package whose type is not "module". */
function isCommonJs(file) {
  if (file.endsWith('.cjs')) return true;
  if (!file.endsWith('.js')) return false;
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')).type !== 'module';
  }
  return true;
}

/** The named exports Node's `import()` gives CommonJS `file`: its own, and those of what it re-exports. */
async function commonJsExportNames(file, seen = new Set()) {
  const names = new Set();
  if (seen.has(file)) return names;
  seen.add(file);
  const lexer = await import('cjs-module-lexer');
  await lexer.init();
  let parsed;
  try {
    parsed = lexer.parse(readFileSync(file, 'utf8'));
  } catch {
    return names; // Node gives such a module no names either
  }
  const { exports, reexports } = parsed;
  for (const name of exports) names.add(name);
  for (const specifier of reexports) {
    let target;
    try {
      target = createRequire(file).resolve(specifier);
    } catch {
      continue; // Node skips a re-export it cannot resolve too
    }
    if (isCommonJs(target)) for (const name of await commonJsExportNames(target, seen)) names.add(name);
  }
  return names;
}

function tsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * Builds into `outdir` (dist/ unless given: a test builds into a folder of its own, inside the
 * repo so the bundle's package imports resolve from its node_modules, while others run dist/).
 */
export async function buildDist({ quiet = false, outdir = DIST } = {}) {
  await stopped(() => buildInto(outdir, quiet));
}

/**
 * Runs `work` (esbuild builds), then stops esbuild's service: its JS API starts a service process
 * on the first build and keeps it until this process exits, which beside `npm start`'s server was
 * an idle process holding over a GiB. The next build starts a new one.
 */
async function stopped(work) {
  ({ build, stop } = await import('esbuild'));
  try {
    return await work();
  } finally {
    await stop();
  }
}

async function buildInto(outdir, quiet) {
  const started = performance.now();
  rmSync(outdir, { recursive: true, force: true });
  const entryPoints = [...tsFiles(join(ROOT, 'src')), ...SCRIPTS.map((s) => join(ROOT, s))];
  await build({
    entryPoints,
    outdir,
    outbase: ROOT,
    bundle: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  await bundle([join(ROOT, 'src/main.ts'), ...SCRIPTS.map((s) => join(ROOT, s))], outdir, ROOT);
  cpSync(join(ROOT, 'src/db/migrations'), join(outdir, 'src/db/migrations'), { recursive: true });
  cpSync(join(ROOT, 'schema'), join(outdir, 'schema'), { recursive: true });
  await writeSchemaArtifact(outdir);
  await placeImage(outdir, quiet);
  mkdirSync(outdir, { recursive: true });
  writeFileSync(join(outdir, '.built'), `${new Date().toISOString()}\n`);
  if (!quiet)
    console.error(
      `built ${entryPoints.length} files into ${relative(process.cwd(), outdir) || '.'} in ${Math.round(performance.now() - started)} ms`,
    );
}

/**
 * Writes the subgraph schema the server builds from its SDL files, validated once here, beside the
 * files in `outdir`/schema (see src/graphql/subgraph-artifact.ts): a start then skips Federation's
 * validating build. An SDL file Federation refuses fails the build, naming the problem.
 */
async function writeSchemaArtifact(outdir) {
  const artifacts = await import(pathToFileURL(join(outdir, 'src/graphql/subgraph-artifact-maker.js')).href);
  artifacts.writeSubgraphArtifact(join(outdir, 'schema'));
}

/**
 * Puts the migrated image of the embedded database for the build's migrations (see
 * src/db/pglite-image.ts) beside them, in `outdir`/src/db/pglite-images: a new database then starts
 * from it, in the production image too (which has dist/ but not the install's cache). It comes from
 * the install's cache (`npm install` makes it there), or is made there first by
 * scripts/pglite-image.ts in a child process, so PGlite's memory is never the server's when
 * `npm start` builds. A failure is reported, not fatal: without an image a new database is made
 * from its migrations.
 */
async function placeImage(outdir, quiet) {
  const into = join(outdir, 'src/db/pglite-images');
  let problem;
  try {
    // The file-by-file output above: it names and finds images as the server does.
    const images = await import(pathToFileURL(join(outdir, 'src/db/pglite-image.js')).href);
    const name = images.imageFileName(images.imageKeys(join(outdir, 'src/db/migrations')).at(-1));
    const cached = join(images.installCacheDir(), name);
    if (existsSync(cached)) {
      mkdirSync(into, { recursive: true });
      copyFileSync(cached, join(into, name));
      return;
    }
    const maker = spawn(process.execPath, ['--import', 'tsx', 'scripts/pglite-image.ts', '--into', into], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', quiet ? 'ignore' : 'inherit'],
    });
    const code = await new Promise((resolve) => maker.on('exit', resolve).on('error', () => resolve(-1)));
    if (code !== 0) problem = `its maker exited with ${code}`;
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  }
  if (problem)
    console.error(`no embedded database image in the build (${problem}): a new database will run its migrations`);
}

/**
 * Bundles `entryPoints` with the packages they import into `outdir` (chunks in `outdir/chunks`),
 * as the server's entry is shipped. Each output file must sit one folder below the dist/ it runs
 * from (`__pgwDist` is its parent's parent), where the migrations and the schema files are.
 */
async function bundle(entryPoints, outdir, outbase, names = {}) {
  const { metafile } = await build({
    entryPoints,
    outdir,
    outbase,
    chunkNames: 'chunks/[name]-[hash]',
    ...names,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
    external: BUNDLE_EXTERNAL,
    minifyWhitespace: true,
    minifySyntax: true,
    allowOverwrite: true,
    plugins: [sourceUrls, web3GlobalFetch],
    // Its paths are relative to absWorkingDir.
    metafile: true,
    absWorkingDir: ROOT,
    // CommonJS packages inside an ES module bundle still call require() for Node's built-ins, and
    // some read __filename or __dirname (ioredis when it shapes an error's stack, package.json
    // readers): undefined in an ES module, that was a ReferenceError thrown from a callback, which
    // ended the process. Each output file gets its own.
    banner: {
      js: "import { createRequire as __pgwRequire } from 'node:module'; import { fileURLToPath as __pgwPath } from 'node:url'; const require = __pgwRequire(import.meta.url); const __filename = __pgwPath(import.meta.url); const __dirname = __pgwPath(new globalThis.URL('.', import.meta.url)); const __pgwDist = new globalThis.URL('../', import.meta.url);",
    },
  });
  await nameCommonJsChunkExports(metafile, ROOT);
}

/**
 * A bench's server script (scripts/bench/*.ts) bundled as the production entry is, into dist/bench/
 * (its chunks into dist/bench-chunks/),
 * after building dist/ when it is stale: benchmarks measure the gateway as `npm start` runs it, not
 * through tsx, whose per-module source maps and transform caches the process would otherwise carry
 * (a larger heap to mark at every major collection). Returns the bundle's path.
 */
export async function buildBenchServer(script) {
  if (distIsStale()) await buildDist({ quiet: true });
  const source = resolve(ROOT, script);
  // Entry in dist/bench/, chunks in dist/bench-chunks/: each one folder below dist/, as `__pgwDist`
  // needs. Emptied first, so chunks of earlier builds do not pile up.
  for (const folder of ['bench', 'bench-chunks']) rmSync(join(DIST, folder), { recursive: true, force: true });
  await stopped(() =>
    bundle([source], DIST, dirname(source), {
      entryNames: 'bench/[name]',
      chunkNames: 'bench-chunks/[name]-[hash]',
    }),
  );
  return join(DIST, 'bench', `${relative(dirname(source), source).replace(/\.ts$/, '.js')}`);
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
