import { buildDist, distIsStale } from '../../scripts/build.mjs';

/**
 * Builds dist/ once per test run when the sources are newer, so every test that starts a server
 * process runs the bundle `npm start` runs (one file) instead of tsx transpiling ~1,500 modules in
 * each child: that start-up was seconds of CPU per child, and the largest cost of the process
 * suites on two cores. CI builds dist/ before the tests, so there it is a no-op.
 */
export default async function setup() {
  if (distIsStale()) await buildDist({ quiet: true });
}
