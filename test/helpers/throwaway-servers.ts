import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A PostgreSQL cluster of a test's own (initdb in a temp directory, its own port), so faults can
 * be done to it without touching the machine's server. initdb and pg_ctl refuse to run as root:
 * as root (CI) they run as the `postgres` user.
 */
export class ThrowawayPostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly asRoot: boolean,
    /** More server settings (`name=value`), beside the fixed ones of startServer. */
    private readonly settings: readonly string[] = [],
  ) {}

  /** A temp directory the server's user owns, on a free port; nothing in it yet. */
  private static async empty(settings: readonly string[] = []): Promise<ThrowawayPostgres> {
    const asRoot = process.getuid?.() === 0;
    const dir = mkdtempSync(join(tmpdir(), 'pgw-faults-pg-'));
    if (asRoot) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    chmodSync(dir, 0o700);
    return new ThrowawayPostgres(dir, await freePort(), asRoot, settings);
  }

  /**
   * A streaming standby of `primary` on a port of its own (pg_basebackup -R: it follows the
   * primary's WAL, read-only, until promoted).
   */
  static async standbyOf(primary: ThrowawayPostgres): Promise<ThrowawayPostgres> {
    const server = await ThrowawayPostgres.empty();
    await server.pg('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      join(server.dir, 'data'),
      '-R',
      '-X',
      'stream',
      '--no-sync',
      // An immediate checkpoint: the default spread one takes minutes.
      '--checkpoint=fast',
    ]);
    await server.startServer();
    return server;
  }

  /** Turns a standby into a primary (it accepts writes once this returns). */
  async promote(): Promise<void> {
    await this.pg('pg_ctl', ['-D', join(this.dir, 'data'), '-w', 'promote']);
  }

  static async start(settings: readonly string[] = []): Promise<ThrowawayPostgres> {
    const server = await ThrowawayPostgres.empty(settings);
    const dir = server.dir;
    await server.pg('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    await server.startServer();
    const admin = new pg.Client({ connectionString: server.url('postgres') });
    await admin.connect();
    await admin.query('create database gateway');
    await admin.end();
    return server;
  }

  url(database = 'gateway', applicationName?: string): string {
    const url = `postgres://postgres@127.0.0.1:${this.port}/${database}`;
    return applicationName ? `${url}?application_name=${applicationName}` : url;
  }

  async startServer(): Promise<void> {
    await this.pg('pg_ctl', [
      '-D',
      join(this.dir, 'data'),
      '-l',
      join(this.dir, 'server.log'),
      '-w',
      '-t',
      '30',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100${this.settings.map((setting) => ` -c ${setting}`).join('')}`,
      'start',
    ]);
  }

  async stopServer(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.pg('pg_ctl', ['-D', join(this.dir, 'data'), '-m', mode, '-w', 'stop']);
  }

  /** Runs statements one by one (each its own transaction) as the superuser on a connection of its own. */
  async sql(statements: string | string[], database = 'gateway'): Promise<void> {
    const client = new pg.Client({ connectionString: this.url(database) });
    await client.connect();
    try {
      for (const statement of [statements].flat()) await client.query(statement);
    } finally {
      await client.end();
    }
  }

  async destroy(): Promise<void> {
    await this.stopServer('immediate').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async pg(command: string, args: string[]): Promise<void> {
    const binary = postgresBinary(command);
    const [file, argv] = this.asRoot ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, args];
    await run(file, argv, { cwd: this.dir, timeout: 60_000 });
  }
}

/**
 * initdb, pg_ctl, pg_basebackup: (Debian) under /usr/lib/postgresql/<newest>/bin, else on PATH.
 * The versioned directory first: Debian's /usr/bin ones are wrappers that want a configured cluster.
 */
function postgresBinary(name: string): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const versioned = versions.map((v) => join(root, v, 'bin', name)).find((path) => existsSync(path));
  if (versioned) return versioned;
  const onPath = (process.env.PATH ?? '').split(':').find((dir) => existsSync(join(dir, name)));
  if (!onPath) throw new Error(`${name} not found: install PostgreSQL server binaries for the fault tests`);
  return join(onPath, name);
}

/** A redis-server of a test's own, with no persistence. */
export class ThrowawayRedis {
  private process: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  static async start(): Promise<ThrowawayRedis> {
    const redis = new ThrowawayRedis(await freePort());
    await redis.startServer();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async startServer(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.process = child;
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (/Ready to accept connections/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', () => reject(new Error(`redis-server exited:\n${output}`)));
    });
    child.stdout!.resume();
  }

  async stopServer(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  async destroy(): Promise<void> {
    await this.stopServer();
  }
}
