// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Compose's ${…} syntax is what these strings test
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  type ComposeService,
  composeDurationMs,
  inDependencyOrder,
  proxyUpstreams,
  readCompose,
} from '../../.ci/compose/compose-file.js';
import { headerCommands, readImage, runsDocker } from '../../.ci/compose/dockerfile.js';
import { readHeaderCommand } from '../../.ci/compose/header-commands.js';
import { InterpolationError, interpolate } from '../../.ci/compose/interpolate.js';
import { REDIS_DATABASE, rewriteEnvironment } from '../../.ci/compose/rewrites.js';
import { shellWords } from '../../.ci/compose/shell-words.js';
import { TEST_ENVIRONMENT } from '../../.ci/compose-topology.js';

/**
 * The deployment test (.ci/compose-topology.ts, run by .ci/check-image.sh) reads compose.yaml and
 * the Dockerfile as Docker would and runs their header commands without Docker. Its readers are
 * checked here on their own, against the real files: a misread file would make that test run
 * something other than what the files say.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const read = (name: string) => readFileSync(join(ROOT, name), 'utf8');
const SECRETS_KEY = 'k'.repeat(43) + '=';

describe('Compose interpolation', () => {
  const env = { SET: 'value', EMPTY: '' };

  it('reads each form as Compose does', () => {
    expect(interpolate('${SET} $SET ${UNSET}|', env)).toBe('value value |');
    expect(interpolate('${SET:-d} ${EMPTY:-d} ${UNSET:-d} ${EMPTY-d} ${UNSET-d}', env)).toBe('value d d  d');
    expect(interpolate('${SET:+alt}|${EMPTY:+alt}|${EMPTY+alt}|${UNSET+alt}', env)).toBe('alt||alt|');
    expect(interpolate('$$SET costs $$5 ${UNSET:-${SET}}', env)).toBe('$SET costs $5 value');
    expect(interpolate('${EMPTY?m}', env)).toBe('');
  });

  it('refuses a required variable that is unset or, with the colon, empty, with the message', () => {
    expect(() => interpolate('${UNSET:?set it (openssl rand -base64 32)}', env)).toThrow(
      /UNSET.*set it \(openssl rand -base64 32\)/,
    );
    expect(() => interpolate('${EMPTY:?required}', env)).toThrow(InterpolationError);
    expect(() => interpolate('${UNSET?required}', env)).toThrow(InterpolationError);
    expect(() => interpolate('${1BAD}', env)).toThrow(/invalid interpolation/);
    expect(() => interpolate('${SET', env)).toThrow(/unclosed/);
  });
});

describe('compose.yaml as the deployment test reads it', () => {
  const text = read('compose.yaml');
  const compose = readCompose(text, { SECRETS_KEY, ...TEST_ENVIRONMENT });
  const service = (name: string) => compose.services.get(name) as ComposeService;

  it('runs its instances with the environment the file gives them through merge keys, interpolated', () => {
    // Without merge keys the instances would have no environment at all: `<<` would be a key.
    expect(parse(text).services['gateway-1'].environment).toBeUndefined();
    const migrate = service('migrate');
    expect(migrate.command).toEqual(['node', 'dist/scripts/migrate.js']);
    for (const name of ['gateway-1', 'gateway-2']) {
      const gateway = service(name);
      expect(gateway.ownImage).toBe(true);
      expect(gateway.command).toBeUndefined();
      expect(gateway.environment).toEqual(migrate.environment);
      expect(gateway.dependsOn.migrate).toBe('service_completed_successfully');
      expect(gateway.stopGracePeriodMs).toBe(30_000);
    }
    expect(migrate.environment).toMatchObject({
      NODE_ENV: 'production',
      SECRETS_KEY,
      PUBLIC_URL: 'https://gw.example.com',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      METRICS_HOST: '0.0.0.0',
    });
    expect(inDependencyOrder([...compose.services.values()].filter((s) => s.ownImage)).map((s) => s.name)).toEqual([
      'migrate',
      'gateway-1',
      'gateway-2',
    ]);
  });

  it("exercises a PUBLIC_URL of its own, https, rather than the file's default", () => {
    expect(readCompose(text, { SECRETS_KEY }).services.get('gateway-1')?.environment.PUBLIC_URL).toBe(
      'http://localhost:8080',
    );
    expect(TEST_ENVIRONMENT.PUBLIC_URL).toMatch(/^https:\/\//);
  });

  it('refuses to start without SECRETS_KEY, as docker compose up does', () => {
    expect(() => readCompose(text, TEST_ENVIRONMENT)).toThrow(/SECRETS_KEY.*openssl rand -base64 32/);
  });

  it('rewrites only host names, ports, the database name and the Redis index', () => {
    const fileEnv = { ...readImage(read('Dockerfile')).env, ...service('gateway-1').environment };
    const env = rewriteEnvironment(fileEnv, { database: 'gw_compose_1', port: 41000, metricsPort: 41001 });
    const changed = Object.keys(fileEnv).filter((name) => env[name] !== fileEnv[name]);
    expect(changed.sort()).toEqual(['DATABASE_URL', 'METRICS_PORT', 'PORT', 'REDIS_URL']);
    expect(env.DATABASE_URL).toBe('postgres://gateway:gateway@127.0.0.1:5432/gw_compose_1');
    expect(env.REDIS_URL).toBe(`redis://127.0.0.1:6379/${REDIS_DATABASE}`);
    expect([env.PORT, env.METRICS_PORT]).toEqual(['41000', '41001']);
  });

  it("points the proxy at the instances' port and readiness route", () => {
    const caddyfile = [...compose.configs.values()].find((c) => c.includes('reverse_proxy')) ?? '';
    expect(proxyUpstreams(caddyfile)).toEqual({
      upstreams: [
        { service: 'gateway-1', port: 4000 },
        { service: 'gateway-2', port: 4000 },
      ],
      healthUri: '/readyz',
    });
  });

  it('reads Compose durations', () => {
    expect(composeDurationMs('30s')).toBe(30_000);
    expect(composeDurationMs('1m30s')).toBe(90_000);
    expect(composeDurationMs('1.5s')).toBe(1_500);
    expect(composeDurationMs('500ms')).toBe(500);
    expect(() => composeDurationMs('30')).toThrow(/not a Compose duration/);
  });
});

describe("the Dockerfile's final stage", () => {
  it('gives a container the ENV and CMD the deployment test runs with', () => {
    const image = readImage(read('Dockerfile'));
    expect(image.env).toEqual({
      NODE_ENV: 'production',
      SEED_DEMO: 'false',
      HOST: '0.0.0.0',
      PORT: '4000',
      PGLITE_DATA_DIR: '/data/pglite',
    });
    expect(image.cmd).toEqual(['node', '--min-semi-space-size=16', '--max-semi-space-size=32', 'dist/src/main.js']);
    expect(image.workdir).toBe('/app');
  });
});

describe('header commands', () => {
  const commands = [...headerCommands(read('Dockerfile')), ...headerCommands(read('compose.yaml'))];

  it('every docker command of the Dockerfile and compose.yaml headers has a mapping', () => {
    expect(commands.length).toBeGreaterThanOrEqual(5);
    expect(commands.map((line) => readHeaderCommand(line).kind).sort()).toEqual([
      'build',
      'compose-exec',
      'compose-up',
      'run',
      'run',
    ]);
  });

  it('reads docker run and compose exec into what runs in their place', () => {
    expect(
      readHeaderCommand('docker run --rm -e SECRETS_KEY=... -e A=b -p 8080:4000 img node dist/scripts/migrate.js'),
    ).toMatchObject({
      kind: 'run',
      image: 'img',
      remove: true,
      env: [
        ['SECRETS_KEY', '...'],
        ['A', 'b'],
      ],
      ports: [{ host: 8080, container: 4000 }],
      command: ['node', 'dist/scripts/migrate.js'],
    });
    expect(readHeaderCommand('K=$(openssl rand -base64 32) docker compose up --build')).toMatchObject({
      kind: 'compose-up',
      assignments: [['K', '$(openssl rand -base64 32)']],
    });
    expect(readHeaderCommand("docker compose exec gateway-1 node x.js --name 'A B'")).toMatchObject({
      kind: 'compose-exec',
      service: 'gateway-1',
      command: ['node', 'x.js', '--name', 'A B'],
    });
  });

  it('refuses a command it has no mapping for, so a new header command cannot go unchecked', () => {
    expect(() => readHeaderCommand('docker compose logs -f gateway-1')).toThrow(/no mapping/);
    expect(() => readHeaderCommand('docker run -v data:/data img')).toThrow(/-v has no mapping/);
    expect(() => readHeaderCommand('docker compose up -d')).toThrow(/only --build/);
    expect(() => shellWords('docker compose up | tee log')).toThrow(/more shell/);
  });

  it('docs/production.md tables each one, and shows no docker command the test does not run', () => {
    const tokens = new MarkdownIt().parse(read('docs/production.md'), {});
    // The first cell of each table row that is one code span running docker: the mapping table.
    const tabled = tokens
      .filter(
        (token, i) => token.type === 'inline' && tokens[i - 1]?.type === 'td_open' && tokens[i - 2]?.type === 'tr_open',
      )
      .map((token) => /^`([^`]+)`$/.exec(token.content)?.[1])
      .filter((cell): cell is string => cell !== undefined && runsDocker(cell));
    expect(tabled.sort()).toEqual([...commands].sort());
    const shown = tokens
      .filter((token) => token.type === 'fence')
      .flatMap((token) => token.content.split('\n'))
      .filter(runsDocker);
    expect(shown.length).toBeGreaterThan(0);
    for (const line of shown) expect(commands, line).toContain(line);
    // The script's own header tables them too.
    const script = read('.ci/compose-topology.ts');
    for (const command of commands) expect(script, command).toContain(` *   ${command}\n`);
  });
});

describe('compose.facade.yaml as the deployment test reads it', () => {
  const text = read('compose.facade.yaml');
  const compose = readCompose(text, { SECRETS_KEY, ...TEST_ENVIRONMENT });
  const service = (name: string) => compose.services.get(name) as ComposeService;
  const commands = headerCommands(text);

  it('shows an up and an exec of its own file in its header, each with a mapping', () => {
    expect(commands.map(readHeaderCommand)).toMatchObject([
      { kind: 'compose-up', file: 'compose.facade.yaml', assignments: [['SECRETS_KEY', '$(openssl rand -base64 32)']] },
      { kind: 'compose-exec', file: 'compose.facade.yaml', service: 'upstream' },
    ]);
    expect(() => readHeaderCommand('docker compose -f ../elsewhere.yaml up')).toThrow(/compose file beside/);
  });

  it('runs a service-mode upstream and a facade in front of it, each on its own database', () => {
    expect(service('upstream').environment.GATEWAY_MODE).toBeUndefined();
    expect(service('facade').environment).toMatchObject({
      NODE_ENV: 'production',
      GATEWAY_MODE: 'facade',
      UPSTREAM_URL: 'http://upstream:4000',
      UPSTREAM_PRIVATE_ADDRESSES: 'true',
      MIGRATE_ON_START: 'false',
    });
    expect(inDependencyOrder([...compose.services.values()].filter((s) => s.ownImage)).map((s) => s.name)).toEqual([
      'upstream-migrate',
      'upstream',
      'facade-migrate',
      'facade',
    ]);
    expect(new URL(service('upstream').environment.DATABASE_URL!).host).toBe('upstream-postgres:5432');
    expect(new URL(service('facade').environment.DATABASE_URL!).host).toBe('facade-postgres:5432');
  });

  it("rewrites each service's database to the run's own and the facade's upstream to where it listens", () => {
    const fileEnv = { ...readImage(read('Dockerfile')).env, ...service('facade').environment };
    const env = rewriteEnvironment(fileEnv, {
      database: 'unused',
      databases: { upstream: 'gw_upstream_1', facade: 'gw_facade_1' },
      hosts: { 'facade-postgres:5432': '127.0.0.1:5432', 'upstream:4000': '127.0.0.1:41002' },
      port: 41000,
      metricsPort: 41001,
    });
    expect(env.DATABASE_URL).toBe('postgres://gateway:gateway@127.0.0.1:5432/gw_facade_1');
    expect(env.UPSTREAM_URL).toBe('http://127.0.0.1:41002');
  });

  it('docs/facade.md shows exactly its header commands, and the deployment script tables them', () => {
    const shown = new MarkdownIt()
      .parse(read('docs/facade.md'), {})
      .filter((token) => token.type === 'fence')
      .flatMap((token) => token.content.split('\n'))
      .filter(runsDocker);
    expect(shown.sort()).toEqual([...commands].sort());
    const script = read('.ci/compose-topology.ts');
    for (const command of commands) expect(script, command).toContain(` *   ${command}\n`);
  });
});
