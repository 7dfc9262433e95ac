import { execFileSync } from 'node:child_process';

/**
 * The deployment check's PostgreSQL: the machine's server (127.0.0.1:5432, user postgres, trust),
 * never its `test` database nor its configuration. Each run creates databases of its own, owned by
 * the role compose.yaml's URL names (created when missing, with the URL's password), and drops them
 * at the end; the role goes too when this run created it and no other database still belongs to it.
 */

const ADMIN = ['-h', '127.0.0.1', '-p', '5432', '-U', 'postgres'];

const psql = (sql: string, database = 'postgres') =>
  execFileSync('psql', [...ADMIN, '-d', database, '-v', 'ON_ERROR_STOP=1', '-Atqc', sql], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
const identifier = (text: string) => `"${text.replaceAll('"', '""')}"`;

export interface Scratch {
  role: string;
  databases: string[];
  createdRole: boolean;
}

/** The role (LOGIN, the given password, no other rights) and one database per name, owned by it. */
export function createScratch(role: string, password: string, databases: string[]): Scratch {
  const exists = psql(`select 1 from pg_roles where rolname = ${literal(role)}`) === '1';
  let createdRole = false;
  if (!exists) {
    try {
      psql(`create role ${identifier(role)} login password ${literal(password)}`);
      createdRole = true;
    } catch (error) {
      // Another run made it in between: use it, leave it to that run.
      if (!/already exists/.test(String((error as { stderr?: string }).stderr))) throw error;
    }
  }
  const scratch: Scratch = { role, databases: [], createdRole };
  for (const database of databases) {
    psql(`create database ${identifier(database)} owner ${identifier(role)}`);
    scratch.databases.push(database);
  }
  return scratch;
}

/** Drops the run's databases (closing any session left), then the role if this run made it; best effort, errors printed. */
export function dropScratch(scratch: Scratch): void {
  for (const database of scratch.databases) {
    try {
      psql(`drop database if exists ${identifier(database)} with (force)`);
    } catch (error) {
      console.error(`could not drop database ${database}: ${(error as { stderr?: string }).stderr ?? error}`);
    }
  }
  if (!scratch.createdRole) return;
  try {
    psql(`drop role if exists ${identifier(scratch.role)}`);
  } catch (error) {
    // Another run's database still belongs to it: that run drops it.
    if (!/depend/.test(String((error as { stderr?: string }).stderr))) throw error;
  }
}

/** `select version()` of the machine's server (docs/production.md names the majors). */
export function serverVersion(): string {
  return psql('select version()');
}
