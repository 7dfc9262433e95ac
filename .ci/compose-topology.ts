/**
 * The deployment test: the Dockerfile's and compose.yaml's header commands and compose.yaml's
 * topology, run from the image's runtime directory (package files, production node_modules and
 * dist/ only) without Docker, which the CI machines do not have. .ci/check-image.sh builds that
 * directory as the Dockerfile does and then runs this:
 *
 *   node --import tsx .ci/compose-topology.ts --files <checkout> --runtime <runtime dir> [--logs <dir>]
 *
 * compose.yaml is read with a YAML parser (merge keys on) and interpolated as Compose does, from the
 * header's own `SECRETS_KEY=$(openssl rand -base64 32)` and a test environment (PUBLIC_URL a
 * non-default https URL, the OTLP endpoint empty). Every variable a container would get (the image's
 * ENV, then the service's environment) reaches the process as the files set it, but for the
 * rewrites listed in .ci/compose/rewrites.ts (host names, ports, the run's own database and Redis
 * index). Each header command, and what runs here in its place (cwd: the runtime directory):
 *
 *   docker build -t partner-gateway .
 *       .ci/check-image.sh's build stage (npm ci --omit=dev, npm run build) and runtime directory
 *   docker run --rm -e SECRETS_KEY=... -e DATABASE_URL=... partner-gateway node dist/scripts/migrate.js
 *       node dist/scripts/migrate.js; image ENV + SECRETS_KEY, DATABASE_URL (a fresh database); exit 0
 *   docker run -e NODE_ENV=production -e SECRETS_KEY=... -e DATABASE_URL=... -p 4000:4000 partner-gateway
 *       the image's CMD (node --min-semi-space-size=16 --max-semi-space-size=32 dist/src/main.js); image ENV + the three
 *       variables, PORT a free port (the -p container port must be the image's PORT); /readyz
 *       answers 200; SIGTERM (docker stop) → exit 0 within docker stop's 10 s
 *   SECRETS_KEY=$(openssl rand -base64 32) docker compose up --build
 *       the `migrate` service's command to exit 0, then gateway-1 and gateway-2 (the image's CMD)
 *       with their environment, until the proxy's health_uri answers 200 on each; postgres and redis
 *       are the machine's (the PostgreSQL major may differ: compose pins its image, CI runs Debian's);
 *       the proxy is not run, its upstreams are checked against the instances' PORT
 *   docker compose exec gateway-1 node dist/scripts/admin.js create-user --email you@example.com
 *       node dist/scripts/admin.js create-user --email you@example.com with gateway-1's environment
 *
 * Then, against the two instances: an API key by the same CLI (create-key), a sandbox wallet funded
 * and a transfer to a second user through gateway-1, the transaction and both balances read through
 * gateway-2; /metrics scraped on each instance's metrics port (METRICS_HOST as compose sets it) and
 * absent on the API port; SIGTERM to both, each exiting 0 within the service's stop_grace_period;
 * the servers' stdout JSON lines only. A header command of another form fails the run until it is
 * mapped here (.ci/compose/header-commands.ts).
 *
 * Last, compose.facade.yaml (a facade in front of an upstream, facadeExample below):
 *
 *   SECRETS_KEY=$(openssl rand -base64 32) docker compose -f compose.facade.yaml up --build
 *       its migrate services, then `upstream` and `facade`, each PostgreSQL service's database a
 *       run database of its own, the facade's UPSTREAM_URL pointed at where `upstream` listens
 *   docker compose -f compose.facade.yaml exec upstream node dist/scripts/admin.js create-user --email you@example.com
 *       the command with the upstream's environment
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type ComposeService, inDependencyOrder, proxyUpstreams, readCompose } from './compose/compose-file.js';
import { createScratch, dropScratch, type Scratch, serverVersion } from './compose/database.js';
import { headerCommands, type ImageSpec, readImage } from './compose/dockerfile.js';
import { type HeaderCommand, readHeaderCommand } from './compose/header-commands.js';
import { expectStatus, freePort, request } from './compose/http.js';
import {
  CheckFailure,
  containerBase,
  killAll,
  nonJsonStdoutLines,
  runToCompletion,
  type Started,
  start,
  stopWithin,
  waitUntilReady,
} from './compose/processes.js';
import { REDIS_DATABASE, rewriteEnvironment, rewriteValue } from './compose/rewrites.js';

/** What the check sets that the files leave to the operator; everything else comes from them. */
export const TEST_ENVIRONMENT = {
  // Not compose.yaml's default, and https: the URL the gateway is reached at behind a real proxy.
  PUBLIC_URL: 'https://gw.example.com',
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
};
/** `docker stop`'s default wait before SIGKILL. */
const DOCKER_STOP_MS = 10_000;
/** How long a one-shot command or a start may take on the shared, loaded CI machine. */
const COMMAND_LIMIT_MS = 180_000;
const READY_LIMIT_MS = 180_000;

const step = (text: string) => console.log(`== ${text}`);
const note = (text: string) => console.log(`   ${text}`);

interface Instance {
  service: ComposeService;
  env: Record<string, string>;
  port: number;
  metricsPort: number;
  process: Started;
}

class Deployment {
  readonly instances = new Map<string, Instance>();
  readonly home: string;
  /** The proxy's configuration texts (checked against the instances, not run). */
  proxyConfigs: string[] = [];
  private execs = 0;

  constructor(
    readonly runtime: string,
    readonly logs: string,
    readonly image: ImageSpec,
    readonly healthUri: string,
  ) {
    this.home = join(logs, 'home');
    mkdirSync(this.home, { recursive: true });
  }

  spawn(name: string, argv: string[], env: Record<string, string>): Started {
    return start(name, argv, { cwd: this.runtime, env: { ...containerBase(this.home), ...env }, logs: this.logs });
  }

  /**
   * `docker build`: check-image.sh built it; here, that the runtime directory holds what the image
   * does and no more (no sources, no dev dependencies), so nothing below can lean on a checkout.
   */
  checkRuntimeDirectory(): void {
    const entries = readdirSync(this.runtime).sort();
    const expected = ['dist', 'node_modules', 'package-lock.json', 'package.json'];
    if (entries.join() !== expected.join())
      throw new CheckFailure(
        `the runtime directory holds ${entries.join(', ')}; the image holds ${expected.join(', ')}`,
      );
    // The lockfile marks each package only dev dependencies need (`"dev": true`): none may be here.
    const lock = JSON.parse(readFileSync(join(this.runtime, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages)
      .filter(([path, entry]) => path && entry.dev && existsSync(join(this.runtime, path)))
      .map(([path]) => path);
    if (devOnly.length)
      throw new CheckFailure(`dev-only packages in the runtime directory: ${devOnly.slice(0, 10).join(', ')}`);
    for (const entry of ['dist/src/main.js', 'dist/scripts/admin.js', 'dist/scripts/migrate.js'])
      if (!existsSync(join(this.runtime, entry))) throw new CheckFailure(`the build left no ${entry}`);
    note(`runtime directory: ${entries.join(', ')}; production dependencies only`);
  }

  /** `docker run … <image> [command]`. */
  async dockerRun(command: Extract<HeaderCommand, { kind: 'run' }>, fills: Record<string, string>): Promise<void> {
    const env: Record<string, string> = { ...this.image.env };
    for (const [name, value] of command.env) {
      if (value !== '...') env[name] = value;
      else if (fills[name] !== undefined) env[name] = fills[name] as string;
      else throw new CheckFailure(`${command.line}: no test value for -e ${name}=...`);
    }
    for (const { container } of command.ports)
      if (String(container) !== env.PORT)
        throw new CheckFailure(`${command.line}: -p publishes ${container}, the image listens on PORT=${env.PORT}`);
    const port = await freePort();
    if (env.PORT !== undefined) env.PORT = String(port);
    if (command.command) {
      note(`here: ${shown(command.command)} (image ENV + ${command.env.map(([n]) => n).join(', ')})`);
      const run = this.spawn('docker-run-command', command.command, env);
      const ms = await runToCompletion(run, COMMAND_LIMIT_MS);
      note(`exit 0 in ${ms} ms: ${run.stdout().trim().split('\n').at(-1)}`);
      return;
    }
    note(`here: ${shown(this.image.cmd)} (image ENV + ${command.env.map(([n]) => n).join(', ')}; PORT=${port})`);
    const server = this.spawn('docker-run-server', this.image.cmd, env);
    const ready = await waitUntilReady(server, `http://127.0.0.1:${port}${this.healthUri}`, READY_LIMIT_MS);
    note(`${this.healthUri} answered 200 after ${ready} ms`);
    const stopped = await stopWithin(server, DOCKER_STOP_MS, 'docker stop waits 10 s');
    note(`SIGTERM (docker stop): exit 0 after ${stopped} ms`);
    this.expectJsonStdout(server);
  }

  /**
   * `docker compose up`: the services of this image in depends_on order; one-shots to exit 0, the
   * others until ready. `databases` maps the file's database names to this run's when it has
   * several; a service another calls by name (`http://upstream:4000`) is reached where it listens.
   */
  async composeUp(
    services: Map<string, ComposeService>,
    database: string,
    databases?: Record<string, string>,
  ): Promise<void> {
    const hosts: Record<string, string> = {};
    for (const service of services.values())
      if (/^postgres(:|$)/.test(service.image ?? '')) hosts[`${service.name}:5432`] = '127.0.0.1:5432';
    for (const service of services.values()) if (!service.ownImage) this.mapOtherService(service, services);
    const ownImage = [...services.values()].filter((s) => s.ownImage);
    const oneShot = new Set(
      ownImage.flatMap((s) =>
        Object.entries(s.dependsOn)
          .filter(([, condition]) => condition === 'service_completed_successfully')
          .map(([name]) => name),
      ),
    );
    for (const service of inDependencyOrder(ownImage)) {
      const port = await freePort();
      const metricsPort = await freePort();
      const fileEnv = { ...this.image.env, ...service.environment };
      const env = rewriteEnvironment(fileEnv, {
        database,
        port,
        metricsPort,
        hosts,
        ...(databases ? { databases } : {}),
      });
      if (fileEnv.PORT) hosts[`${service.name}:${fileEnv.PORT}`] = `127.0.0.1:${port}`;
      const changed = Object.keys(env).filter((name) => env[name] !== fileEnv[name]);
      const argv = service.command ?? this.image.cmd;
      note(`${service.name}: ${shown(argv)}; ${Object.keys(env).length} variables, rewritten: ${changed.join(', ')}`);
      const proc = this.spawn(service.name, argv, env);
      if (oneShot.has(service.name)) {
        const ms = await runToCompletion(proc, COMMAND_LIMIT_MS);
        note(`${service.name}: exit 0 in ${ms} ms`);
        continue;
      }
      this.instances.set(service.name, { service, env, port, metricsPort, process: proc });
    }
    // The instances start together, as compose starts them.
    await Promise.all(
      [...this.instances.values()].map(async ({ service, port, process: proc }) => {
        const ms = await waitUntilReady(proc, `http://127.0.0.1:${port}${this.healthUri}`, READY_LIMIT_MS);
        note(`${service.name}: ${this.healthUri} answered 200 after ${ms} ms (port ${port})`);
      }),
    );
  }

  /** Services of other images: the machine's PostgreSQL and Redis, and the proxy, which is checked, not run. */
  mapOtherService(service: ComposeService, services: Map<string, ComposeService>): void {
    const image = service.image ?? '';
    if (/^postgres(:|$)/.test(image)) {
      note(`${service.name}: compose runs ${image}; here the machine's ${serverVersion().split(' on ')[0]}`);
    } else if (/^redis(:|$)/.test(image)) {
      const pong = execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', '6379', '-n', REDIS_DATABASE, 'ping'], {
        encoding: 'utf8',
      }).trim();
      note(`${service.name}: compose runs ${image}; here the machine's Redis (${pong}), database ${REDIS_DATABASE}`);
    } else if (/^caddy(:|$)/.test(image)) {
      // The proxy is not run: its upstreams must be this image's long-running services on their PORT.
      for (const content of this.proxyConfigs) {
        const { upstreams } = proxyUpstreams(content);
        for (const { service: name, port } of upstreams) {
          const upstream = services.get(name);
          const listens = upstream && (upstream.environment.PORT ?? this.image.env.PORT);
          if (!upstream?.ownImage || listens !== String(port))
            throw new CheckFailure(`${service.name} sends to ${name}:${port}, which is not an instance's PORT`);
        }
        note(
          `${service.name}: not run; its upstreams ${upstreams.map((u) => `${u.service}:${u.port}`).join(', ')} are the instances' PORT`,
        );
      }
    } else throw new CheckFailure(`service ${service.name} (image ${image}) has no mapping in the deployment check`);
  }

  instance(name: string): Instance {
    const found = this.instances.get(name);
    if (!found) throw new CheckFailure(`no running instance ${name}`);
    return found;
  }

  /** `docker compose exec <service> command…`: the command with that service's environment. */
  async exec(service: string, argv: string[]): Promise<Started> {
    const { env } = this.instance(service);
    // Named after the command's first plain word (`create-user`), numbered: logs/<service>-exec-<n>-<word>.out
    const word = argv.find((w) => !w.startsWith('-') && !w.includes('/') && w !== 'node') ?? 'command';
    const run = this.spawn(`${service}-exec-${++this.execs}-${word}`, argv, env);
    const ms = await runToCompletion(run, COMMAND_LIMIT_MS);
    note(`${service}: ${shown(argv)} → exit 0 in ${ms} ms`);
    return run;
  }

  expectJsonStdout(proc: Started): void {
    const bad = nonJsonStdoutLines(proc);
    if (bad.length)
      throw new CheckFailure(`${proc.name}: stdout (the log stream) held lines that are not JSON:\n${bad.join('\n')}`);
  }
}

/** A command line as a shell would take it (words with spaces quoted). */
const shown = (argv: string[]) => argv.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w}'`)).join(' ');

/** A header's `NAME=value` assignment evaluated as sh would (a `$(…)` is run). */
function evaluate(name: string, value: string): string {
  return execFileSync('sh', ['-c', `${name}=${value}; printf '%s' "$${name}"`], { encoding: 'utf8' });
}

/** The sandbox round trip across the two instances: write through one, read through the other. */
async function roundTrip(deployment: Deployment, sender: string, write: string, read: string): Promise<void> {
  const admin = async (args: string[]) => {
    const run = await deployment.exec(write, ['node', 'dist/scripts/admin.js', ...args, '--json']);
    return JSON.parse(run.stdout()) as { key?: string };
  };
  const recipient = 'recipient@example.com';
  const senderKey = (
    await admin(['create-key', '--user', sender, '--name', 'deployment', '--permission', 'Full Access'])
  ).key as string;
  await admin(['create-user', '--email', recipient]);
  const recipientKey = (await admin(['create-key', '--user', recipient, '--name', 'deployment'])).key as string;
  const one = deployment.instance(write).port;
  const two = deployment.instance(read).port;

  const funded = expectStatus(
    await request(one, 'POST', '/api/v1/wallet/sandbox/virtual-account/transfer', {
      key: senderKey,
      body: { amount: 5000 },
    }),
    201,
    `${write}: fund the sandbox wallet`,
  );
  note(`${write}: funded NGN 5,000 (deposit ${funded.data.status})`);
  const reference = `deploy-${process.pid}`;
  expectStatus(
    await request(one, 'POST', '/api/v1/wallet/transfer', {
      key: senderKey,
      body: { amount: 1200, recipient, reference },
    }),
    201,
    `${write}: transfer to ${recipient}`,
  );
  note(`${write}: transferred NGN 1,200 to ${recipient} (reference ${reference})`);

  const seen = expectStatus(
    await request(two, 'GET', `/api/v1/transactions/reference/${reference}`, { key: senderKey }),
    200,
    `${read}: the transfer by reference`,
  );
  if (seen.data.status !== 'COMPLETED' || seen.data.amount !== 1200)
    throw new CheckFailure(`${read}: the transfer reads ${JSON.stringify(seen.data)}`);
  const balance = async (key: string) =>
    expectStatus(await request(two, 'GET', '/api/v1/wallet/balance', { key }), 200, `${read}: balance`).data.available;
  const [senderBalance, recipientBalance] = [await balance(senderKey), await balance(recipientKey)];
  if (senderBalance !== 3800 || recipientBalance !== 1200)
    throw new CheckFailure(`${read}: balances ${senderBalance} and ${recipientBalance}, expected 3800 and 1200`);
  note(
    `${read}: the transfer is COMPLETED; balances NGN ${senderBalance} (sender) and NGN ${recipientBalance} (recipient)`,
  );
}

/** /metrics on each instance's metrics port, with the requests it served; none on the API port in production. */
async function scrapeMetrics(deployment: Deployment, served: Record<string, string>): Promise<void> {
  for (const [name, route] of Object.entries(served)) {
    const { port, metricsPort, env } = deployment.instance(name);
    const scraped = await request(metricsPort, 'GET', '/metrics');
    if (scraped.status !== 200) throw new CheckFailure(`${name}: /metrics on METRICS_PORT answered ${scraped.status}`);
    const body = scraped.text;
    const counted = body
      .split('\n')
      .some(
        (line) =>
          line.startsWith('gateway_http_requests_total{') &&
          line.includes(`route="${route}"`) &&
          line.includes('status_class="2xx"'),
      );
    if (!counted) throw new CheckFailure(`${name}: /metrics counts no 2xx on ${route}`);
    if (!/^gateway_redis_up 1$/m.test(body)) throw new CheckFailure(`${name}: /metrics does not show Redis up`);
    const onApi = await request(port, 'GET', '/metrics');
    if (onApi.status !== 404) throw new CheckFailure(`${name}: /metrics on the API port answered ${onApi.status}`);
    note(
      `${name}: /metrics on ${env.METRICS_HOST}:${metricsPort} counts ${route}, gateway_redis_up 1; API port /metrics 404`,
    );
  }
}

/**
 * compose.facade.yaml: a facade in front of an upstream deployment. Its header's `up` (the file's
 * services, each PostgreSQL service's database a run database of its own, the facade's
 * UPSTREAM_URL rewritten to where `upstream` listens here) and `exec` (a user made upstream); then
 * a key made upstream for that user is the caller's key at the facade: `GET /api/v1/user/me`
 * through the facade answers the upstream's bytes, and GraphQL `me` the same user; SIGTERM to
 * both within their stop_grace_period.
 */
async function facadeExample(options: {
  files: string;
  runtime: string;
  logs: string;
  image: ImageSpec;
  healthUri: string;
}): Promise<void> {
  const file = 'compose.facade.yaml';
  const text = readFileSync(join(options.files, file), 'utf8');
  const commands = headerCommands(text).map(readHeaderCommand);
  for (const command of commands)
    if ((command.kind !== 'compose-up' && command.kind !== 'compose-exec') || command.file !== file)
      throw new CheckFailure(`${file}'s header command \`${command.line}\` is not docker compose -f ${file} up/exec`);
  const up = commands.filter((c) => c.kind === 'compose-up');
  if (up.length !== 1) throw new CheckFailure(`${file}'s header shows ${up.length} docker compose up commands`);
  const interpolation: Record<string, string> = {
    ...Object.fromEntries((up[0]?.assignments ?? []).map(([name, value]) => [name, evaluate(name, value)])),
    ...TEST_ENVIRONMENT,
  };
  const compose = readCompose(text, interpolation);
  const urls = [...compose.services.values()]
    .filter((s) => s.ownImage && s.environment.DATABASE_URL)
    .map((s) => new URL(s.environment.DATABASE_URL as string));
  const databases = Object.fromEntries(
    [...new Set(urls.map((u) => u.pathname.slice(1)))].map((name) => [name, `gw_${name}_${process.pid}`]),
  );
  const [first] = urls;
  if (!first) throw new CheckFailure(`${file} sets no DATABASE_URL`);
  const scratch = createScratch(
    decodeURIComponent(first.username),
    decodeURIComponent(first.password),
    Object.values(databases),
  );
  const deployment = new Deployment(options.runtime, join(options.logs, 'facade'), options.image, options.healthUri);
  try {
    note(`databases ${Object.values(databases).join(', ')}`);
    let email: string | undefined;
    for (const command of [...commands].sort(
      (a, b) => Number(a.kind === 'compose-exec') - Number(b.kind === 'compose-exec'),
    )) {
      step(command.line);
      if (command.kind === 'compose-up')
        await deployment.composeUp(compose.services, Object.values(databases)[0] as string, databases);
      else if (command.kind === 'compose-exec') {
        const run = await deployment.exec(command.service, command.command);
        note(run.stdout().trim());
        const at = command.command.indexOf('--email');
        if (command.command.includes('create-user') && at >= 0) email = command.command[at + 1];
      }
    }
    const upstream = deployment.instance('upstream');
    const facade = [...deployment.instances.values()].find((i) => i.env.GATEWAY_MODE === 'facade');
    if (!facade) throw new CheckFailure(`${file} runs no instance with GATEWAY_MODE=facade`);
    if (!email) throw new CheckFailure(`${file}'s header creates no user upstream`);
    step(`a key made upstream, used at the facade (${facade.service.name})`);
    const made = await deployment.exec('upstream', [
      'node',
      'dist/scripts/admin.js',
      'create-key',
      '--user',
      email,
      '--name',
      'facade',
      '--json',
    ]);
    const { key } = JSON.parse(made.stdout()) as { key: string };
    const direct = await request(upstream.port, 'GET', '/api/v1/user/me', { key });
    const through = await request(facade.port, 'GET', '/api/v1/user/me', { key });
    const me = expectStatus(through, 200, `${facade.service.name}: GET /api/v1/user/me`);
    if (through.text !== direct.text)
      throw new CheckFailure(
        `the facade answered ${through.text.slice(0, 500)}; the upstream ${direct.text.slice(0, 500)}`,
      );
    if (me.data.email !== email) throw new CheckFailure(`the facade's user/me is ${JSON.stringify(me.data)}`);
    note(`${facade.service.name}: GET /api/v1/user/me answers the upstream's bytes (${email})`);
    const graph = expectStatus<{ data?: { me?: { email?: string } }; errors?: unknown }>(
      await request(facade.port, 'POST', '/graphql', { key, body: { query: '{ me { id email } }' } }),
      200,
      `${facade.service.name}: GraphQL me`,
    );
    if (graph.errors || graph.data?.me?.email !== email)
      throw new CheckFailure(`${facade.service.name}: GraphQL me answered ${JSON.stringify(graph)}`);
    note(`${facade.service.name}: GraphQL me is ${email}, asked of the upstream with the caller's key`);

    step(`docker compose -f ${file} stop`);
    await Promise.all(
      [...deployment.instances.values()].map(async ({ service, process: proc }) => {
        const grace = service.stopGracePeriodMs;
        const ms = await stopWithin(proc, grace, `stop_grace_period ${grace / 1000} s`);
        note(`${service.name}: exit 0 after ${ms} ms`);
        deployment.expectJsonStdout(proc);
      }),
    );
  } finally {
    killAll();
    dropScratch(scratch);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { files: { type: 'string', default: '.' }, runtime: { type: 'string' }, logs: { type: 'string' } },
  });
  if (!values.runtime)
    throw new CheckFailure('usage: compose-topology.ts --runtime <dir> [--files <dir>] [--logs <dir>]');
  const files = resolve(values.files);
  const logs = values.logs ? resolve(values.logs) : mkdtempSync(join(tmpdir(), 'pgw-deploy-'));
  mkdirSync(logs, { recursive: true });
  const dockerfileText = readFileSync(join(files, 'Dockerfile'), 'utf8');
  const composeText = readFileSync(join(files, 'compose.yaml'), 'utf8');

  // Every header command is read into its mapping before anything runs.
  const commands = [...headerCommands(dockerfileText), ...headerCommands(composeText)].map(readHeaderCommand);
  const up = commands.filter((c) => c.kind === 'compose-up');
  if (up.length !== 1) throw new CheckFailure(`compose.yaml's header shows ${up.length} docker compose up commands`);
  const interpolation: Record<string, string> = {
    ...Object.fromEntries((up[0]?.assignments ?? []).map(([name, value]) => [name, evaluate(name, value)])),
    ...TEST_ENVIRONMENT,
  };
  const compose = readCompose(composeText, interpolation);
  const image = readImage(dockerfileText);
  const proxy = [...compose.configs.values()].filter((c) => c.includes('reverse_proxy'));
  const { healthUri } = proxyUpstreams(proxy[0] ?? '');
  if (!dockerfileText.includes(healthUri))
    throw new CheckFailure(`the proxy checks ${healthUri}, the Dockerfile's HEALTHCHECK does not`);

  const fileUrl = [...compose.services.values()].find((s) => s.ownImage)?.environment.DATABASE_URL;
  if (!fileUrl) throw new CheckFailure('compose.yaml sets no DATABASE_URL');
  const { username, password } = new URL(fileUrl);
  // The Dockerfile's `-e DATABASE_URL=...`: compose's URL, rewritten as the instances' is.
  const databaseUrl = (database: string) =>
    rewriteValue('DATABASE_URL', fileUrl, { database, port: 0, metricsPort: 0 });
  const databases = { image: `gw_image_${process.pid}`, compose: `gw_compose_${process.pid}` };

  const deployment = new Deployment(resolve(values.runtime), logs, image, healthUri);
  deployment.proxyConfigs = proxy;
  let scratch: Scratch | undefined;
  const cleanUp = () => {
    killAll();
    if (scratch) dropScratch(scratch);
    scratch = undefined;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      console.error(`deployment test: ${signal}, stopping`);
      cleanUp();
      process.exit(1);
    });

  scratch = createScratch(decodeURIComponent(username), decodeURIComponent(password), Object.values(databases));
  note(`databases ${Object.values(databases).join(', ')} (owner ${username}); logs in ${logs}`);
  const order: Record<HeaderCommand['kind'], number> = { build: 0, run: 1, 'compose-up': 3, 'compose-exec': 4 };
  const rank = (c: HeaderCommand) => order[c.kind] + (c.kind === 'run' && !c.command ? 1 : 0);
  let sender: string | undefined;
  try {
    for (const command of [...commands].sort((a, b) => rank(a) - rank(b))) {
      step(command.line);
      switch (command.kind) {
        case 'build':
          deployment.checkRuntimeDirectory();
          break;
        case 'run':
          await deployment.dockerRun(command, {
            SECRETS_KEY: interpolation.SECRETS_KEY ?? evaluate('SECRETS_KEY', '$(openssl rand -base64 32)'),
            DATABASE_URL: databaseUrl(databases.image),
          });
          break;
        case 'compose-up':
          await deployment.composeUp(compose.services, databases.compose);
          break;
        case 'compose-exec': {
          const run = await deployment.exec(command.service, command.command);
          note(run.stdout().trim());
          // The user the header creates sends the round trip's money.
          const email = command.command.indexOf('--email');
          if (command.command.includes('create-user') && email >= 0) sender = command.command[email + 1];
        }
      }
    }
    const [write, read] = [...deployment.instances.keys()];
    if (!write || !read) throw new CheckFailure('compose.yaml runs fewer than two gateway instances');
    step(`a transfer through ${write}, read through ${read}`);
    if (!sender) {
      sender = 'sender@example.com';
      await deployment.exec(write, ['node', 'dist/scripts/admin.js', 'create-user', '--email', sender]);
    }
    await roundTrip(deployment, sender, write, read);

    step('/metrics on each instance');
    await scrapeMetrics(deployment, { [write]: '/api/v1/wallet/transfer', [read]: '/api/v1/wallet/balance' });

    step('docker compose stop: SIGTERM to every instance');
    await Promise.all(
      [...deployment.instances.values()].map(async ({ service, process: proc }) => {
        const grace = service.stopGracePeriodMs;
        const ms = await stopWithin(proc, grace, `stop_grace_period ${grace / 1000} s`);
        note(`${service.name}: exit 0 after ${ms} ms (stop_grace_period ${grace / 1000} s)`);
        deployment.expectJsonStdout(proc);
      }),
    );
  } finally {
    cleanUp();
  }
  step('the facade example: compose.facade.yaml');
  await facadeExample({ files, runtime: resolve(values.runtime), logs, image, healthUri });
  console.log('deployment test OK');
}

// Run as a script (not when a test imports it for its constants).
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href)
  main().catch((error: unknown) => {
    killAll();
    console.error(`deployment test FAILED: ${error instanceof CheckFailure ? error.message : (error as Error)?.stack}`);
    process.exit(1);
  });
