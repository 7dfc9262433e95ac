import { Keypair } from '@solana/web3.js';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, ROOT } from '../../scripts/build.mjs';
import { MIGRATIONS_FOLDER } from '../../src/db/migrations-folder.js';
import { imageFileName, imageKeys } from '../../src/db/pglite-image.js';
import { childrenOf } from '../../scripts/bench/process-group.js';
import { type Child, spawnCommand } from '../helpers/child.js';
import { Mailbox } from '../helpers/mailbox.js';
import { Receiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The server `npm start` runs is an esbuild bundle (scripts/build.mjs), not the sources tests
 * import: a CommonJS package inside it that reads `__filename` once ended the process, and only
 * when the code path that reads it ran. This builds the bundle into a folder of its own (inside
 * the repo, so its package imports resolve; dist/ stays whatever `npm start` elsewhere runs),
 * starts it on a throwaway embedded database and drives REST, GraphQL and the sandbox chain
 * through it: no answer may be a 5xx and the process must stay up, then stop cleanly.
 */
describe('the bundled server (npm start)', () => {
  // Through node_modules' real path: in a checkout whose node_modules is a link (a second work tree
  // sharing one install), the server reports the paths it resolved, not the link's.
  const outdir = join(realpathSync(join(ROOT, 'node_modules')), '.cache', `pgw-bundle-${process.pid}-${Date.now()}`);
  const data = mkdtempSync(join(tmpdir(), 'pgw-bundle-data-'));
  let child: Child | undefined;

  beforeAll(async () => {
    await buildDist({ quiet: true, outdir });
  });
  /** Local servers a test started, stopped after it whatever its outcome. */
  const stops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const stop of stops.splice(0)) await stop();
    if (child && child.process.exitCode === null && child.process.signalCode === null) {
      child.process.kill('SIGKILL');
      await child.exited;
    }
    rmSync(outdir, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  });

  /** Output files of the bundle (the entries and their chunks), each with the banner's definitions. */
  const bundleFiles = () => [
    join(outdir, 'src', 'main.js'),
    join(outdir, 'scripts', 'admin.js'),
    join(outdir, 'scripts', 'migrate.js'),
    ...readdirSync(join(outdir, 'chunks'))
      .filter((f) => f.endsWith('.js'))
      .map((f) => join(outdir, 'chunks', f)),
  ];

  /**
   * The sources an output file was made from, as absolute paths: relative to the map, a package's
   * path has no `node_modules/` in it when the bundle is itself inside node_modules/.cache.
   */
  const sourcesOf = (file: string) =>
    (JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] }).sources.map((source) =>
      resolve(dirname(file), source),
    );

  // esbuild's JS API keeps a service process until it is stopped: beside `npm start`'s server it
  // was an idle process holding over a GiB. Killed, it is gone as soon as it is reaped.
  it('leaves no esbuild service process behind', async () => {
    await waitUntil(() => !childrenOf(process.pid).some((p) => p.name === 'esbuild'), 10_000);
  });

  // Federation's validating build ran once per start until the build made the schema artifact
  // (src/graphql/subgraph-artifact.ts); its code is still a tenth of a second to load, so the
  // bundle leaves it out and only a start without a good artifact requires it from node_modules.
  it("carries none of Federation's validating code", () => {
    const carrying = bundleFiles().filter((file) => {
      return sourcesOf(file).some((source) => source.includes('node_modules/@apollo/federation-internals/'));
    });
    expect(carrying).toEqual([]);
  });

  /** `entry` and the output files it imports statically, transitively: what loading it loads. */
  const staticGraph = (entry: string) => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      for (const [, spec] of text.matchAll(
        /(?:^|[;}\s])(?:import|export)\s*(?:[\w$*{},\s]+from\s*)?["'](\.{1,2}\/[^"']+)["']/g,
      ))
        visit(join(file, '..', spec!));
    };
    visit(entry);
    return [...seen];
  };
  /** The files a start loads before any dynamic import: main.js and the chunks it imports statically. */
  const startFiles = () => staticGraph(join(outdir, 'src', 'main.js'));

  // Packages a start has no use for load when first used: undici with the first webhook,
  // nodemailer with the first mail, ioredis when REDIS_URL is set; web3.js's node-fetch (and tr46's
  // tables) never, as Node 20 has a global fetch. Each was tens of milliseconds of a warm start
  // (docs/benchmarks.md).
  it('loads undici, nodemailer, ioredis and node-fetch only when they are used', () => {
    const files = startFiles();
    expect(files.length).toBeGreaterThan(1);
    // The check reads the right paths: the start does carry TypeBox (the configuration's schema).
    expect(files.flatMap(sourcesOf).some((source) => source.includes('/node_modules/@sinclair/typebox/'))).toBe(true);
    const carried = files.flatMap((file) => {
      return sourcesOf(file)
        .map((source) => /node_modules\/(undici|nodemailer|ioredis|node-fetch|tr46)\//.exec(source)?.[1])
        .filter((name): name is string => name !== undefined);
    });
    expect([...new Set(carried)]).toEqual([]);
  });

  // A chunk made for import() of a CommonJS module exported only `default`, where Node gives the
  // module's names too: @fastify/cookie's `(await import('cookie')).stringifySetCookie` was
  // undefined in the bundle, and every response setting a cookie answered 500.
  it('gives import() of a CommonJS module the named exports Node gives it', async () => {
    const targets = new Set<string>();
    for (const file of bundleFiles())
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/import\("\.\/([^"]+\.js)"\)/g))
        targets.add(join(outdir, 'chunks', spec!));
    expect(targets.size).toBeGreaterThan(3);
    // What esbuild leaves for such a chunk, rewritten by the build (nameCommonJsChunkExports).
    const defaultOnly = [...targets].filter((file) =>
      /export default require_[\w$]+\(\)/.test(readFileSync(file, 'utf8')),
    );
    expect(defaultOnly).toEqual([]);
    const chunkOf = (pkg: string) =>
      [...targets].find((file) =>
        staticGraph(file).some((part) => sourcesOf(part).some((source) => source.includes(`/node_modules/${pkg}/`))),
      )!;
    const cookie = (await import(chunkOf('cookie'))) as Record<string, unknown>;
    expect(typeof cookie.stringifySetCookie).toBe('function');
    expect(typeof (cookie.default as Record<string, unknown>).parseCookie).toBe('function');
    // The lazily loaded packages are read by name: ioredis in a server with Redis, undici for webhooks.
    const ioredis = (await import(chunkOf('ioredis'))) as Record<string, unknown>;
    expect(typeof ioredis.Redis).toBe('function');
    const undici = (await import(chunkOf('undici'))) as Record<string, unknown>;
    expect([typeof undici.request, typeof undici.Agent, typeof undici.buildConnector]).toEqual([
      'function',
      'function',
      'function',
    ]);
  });

  it('defines require, __filename and __dirname in every bundle file that uses them', () => {
    const files = bundleFiles();
    expect(files.length).toBeGreaterThan(1);
    const missing: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      // What a file declares at module scope before its first statement of its own.
      const head = text.slice(0, 1_000);
      for (const name of ['require', '__filename', '__dirname']) {
        const uses = new RegExp(`(?<![\\w$.])${name}(?![\\w$])`).test(text.slice(head.length));
        if (uses && !new RegExp(`const ${name} =`).test(head)) missing.push(`${file.slice(outdir.length)}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
    // The chunk of the package that once crashed reads __filename.
    expect(files.some((f) => /__filename/.test(readFileSync(f, 'utf8').slice(1_000)))).toBe(true);
  });

  // The image has dist/ and no sources: the admin CLI once imported modules the build never wrote
  // (scripts/admin/*.js), so `node dist/scripts/admin.js` failed with ERR_MODULE_NOT_FOUND there.
  it('runs the admin CLI from the build alone (node dist/scripts/admin.js --help)', async () => {
    const cli = spawnCommand(process.execPath, [join(outdir, 'scripts', 'admin.js'), '--help'], {});
    expect({ code: await cli.exited, output: cli.output() }).toMatchObject({
      code: 0,
      output: expect.stringMatching(/^Usage: npm run admin -- <command>/),
    });
  });

  // A new embedded database starts from it (src/db/pglite-image.ts), in the production image too,
  // which has dist/ but not the install's cache.
  const image = () => join(outdir, 'src', 'db', 'pglite-images', imageFileName(imageKeys(MIGRATIONS_FOLDER).at(-1)!));
  it('carries the migrated image of its migrations', () => {
    expect(readdirSync(join(outdir, 'src', 'db', 'pglite-images'))).toEqual([image().split('/').at(-1)]);
  });

  it('serves REST, GraphQL and the sandbox chain, delivers webhooks and sends mail, without a 5xx or a crash, and stops cleanly', async () => {
    const receiver = await new Receiver().start();
    const mailbox = await new Mailbox().start();
    stops.push(
      () => receiver.stop(),
      () => mailbox.stop(),
    );
    child = spawnCommand(process.execPath, [join(outdir, 'src', 'main.js')], {
      SMTP_URL: mailbox.url,
      PGLITE_DATA_DIR: join(data, 'pglite'),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      // With the run's Redis when it has one: ioredis is one of the packages that read __dirname.
      REDIS_URL: process.env.REDIS_URL ?? '',
    });
    const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/, 90_000);
    // The database came from the build's own image (its path found from the bundle, as in production).
    await child.waitFor(new RegExp(`made from ${image().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(`));
    const [, key] = await child.waitFor(/API key \(Full Access, shown once\): (pgw_sbx_\S+)/);
    const statuses: Array<[string, number]> = [];
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { 'x-api-key': key!, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      statuses.push([`${method} ${path}`, response.status]);
      return { status: response.status, json: (await response.json().catch(() => undefined)) as any };
    };

    expect((await call('GET', '/api/v1/user/me')).status).toBe(200);
    // Webhooks go out through undici, loaded from its own chunk when the first one is sent.
    expect((await call('POST', '/api/v1/webhooks', { url: receiver.url, eventTypes: ['*'] })).status).toBe(201);
    // Refusals take the error path (error handler, error mapping), which a happy request skips.
    expect((await call('POST', '/api/v1/solana/transfer-sol', { to: 'nope', amount: 'x' })).status).toBe(400);
    expect((await call('GET', '/api/v1/no-such-route')).status).toBe(404);
    const graphql = await call('POST', '/graphql', { query: '{ apiKeys { id environment } }' });
    expect(graphql.json.errors).toBeUndefined();
    expect(graphql.json.data.apiKeys.length).toBeGreaterThan(0);
    const invalid = await call('POST', '/graphql', { query: '{ noSuchField }' });
    expect(invalid.json.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');

    // The sandbox chain: litesvm is loaded on first use, a funded wallet sends SOL.
    expect((await call('GET', '/api/v1/solana/address')).status).toBe(200);
    const funded = await call('POST', '/api/v1/solana/sandbox/faucet', {
      network: 'devnet',
      asset: 'SOL',
      amount: '1',
    });
    expect(funded.status, JSON.stringify(funded.json)).toBeLessThan(300);
    const sent = await call('POST', '/api/v1/solana/transfer-sol', {
      to: Keypair.generate().publicKey.toBase58(),
      amount: '0.01',
      network: 'devnet',
    });
    expect(sent.status, JSON.stringify(sent.json)).toBeLessThan(300);
    const portfolio = await call('GET', '/api/v1/solana/portfolio?network=devnet');
    expect(portfolio.status, JSON.stringify(portfolio.json)).toBe(200);
    for (const path of ['/healthz', '/readyz', '/docs', '/openapi.json']) {
      const response = await fetch(`${url}${path}`);
      statuses.push([`GET ${path}`, response.status]);
    }

    // The sandbox chain's events reached the receiver, signed.
    await receiver.waitFor(1, 60_000);
    expect(receiver.received[0]!.headers['webhook-signature']).toMatch(/^v1,/);

    // Sign-up mails its confirmation through nodemailer, loaded from its own chunk.
    const form = await fetch(`${url}/signup`);
    const cookie = form.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const page = await form.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
    expect(token, `${form.status} ${page.slice(0, 300)}`).toBeDefined();
    const signUp = await fetch(`${url}/signup`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: token!, email: 'bundle@example.com', password: 'a long enough password' }),
    });
    statuses.push(['POST /signup', signUp.status]);
    expect(signUp.status).toBe(201);
    await mailbox.waitFor('bundle@example.com', /Confirm your email/, 30_000);

    expect(statuses.filter(([, status]) => status >= 500)).toEqual([]);
    expect(child.process.exitCode).toBeNull();
    expect(child.output()).not.toMatch(/ReferenceError|is not defined|uncaught/i);
    child.process.kill('SIGTERM');
    expect(await child.exited).toBe(0);
  });
});
