/**
 * Every server of `npm run bench:money` in ONE bundle, chosen by BENCH_SERVER (`gateway`, the
 * default; `exact`, `reference`, `statements`): the harness bundles a bench server into dist/bench/
 * and empties that folder at each build, so a second build would delete the files of a server
 * already running. Each runs as `npm start` runs the gateway (compiled, not through tsx), so no
 * peer pays tsx's costs the gateway does not. Arguments pass through unchanged.
 */
const servers: Record<string, () => Promise<unknown>> = {
  gateway: () => import('./money-server.js'),
  exact: () => import('./money-exact.js'),
  reference: () => import('./money-reference.js'),
  statements: () => import('./money-ceiling.js'),
};
const server = servers[process.env.BENCH_SERVER ?? 'gateway'];
if (!server) throw new Error(`BENCH_SERVER is one of ${Object.keys(servers).join(', ')}`);
await server();
