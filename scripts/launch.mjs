// Runs a compiled entry point (dist/<entry>.js), building dist/ first when it is missing or older
// than the sources, in this same process: `npm start` is one Node process, so SIGTERM and SIGINT
// reach the server's own handlers directly. The build stops the esbuild service it started, so the
// server runs alone; with dist/ up to date, esbuild is not even loaded.
//
//   node scripts/launch.mjs src/main          (npm start)
//   node scripts/launch.mjs scripts/migrate   (npm run migrate)
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const entry = process.argv[2];
if (!entry) {
  console.error('usage: node scripts/launch.mjs <entry, e.g. src/main>');
  process.exit(2);
}
const { buildDist, distIsStale, DIST } = await import('./build.mjs').catch(() => ({}));
const canBuild = () => {
  try {
    import.meta.resolve('esbuild');
    return true;
  } catch {
    return false;
  }
};
// An image built without esbuild (dev dependency or not) still has dist/: run it as it is.
if (buildDist && distIsStale() && canBuild()) await buildDist();
process.argv.splice(2, 1);
await import(pathToFileURL(join(DIST ?? join(import.meta.dirname, '..', 'dist'), `${entry}.js`)).href);
