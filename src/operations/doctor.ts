import { readFileSync } from 'node:fs';
import { unstampedBacklog } from '../domain/events/relay.js';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { type Config, isProduction, publicUrlProblem } from '../config.js';
import { type Database, MIGRATIONS_FOLDER, queryRows } from '../db/client.js';
import { toSafeNumber } from '../db/columns.js';
import { ledger } from '../domain/ledger/ledger.js';

export interface Check {
  name: string;
  ok: boolean;
  /** A plain sentence: what is fine, or what is wrong and what to do. */
  detail: string;
}

/**
 * `admin doctor`: the configuration, the database (reachable, migrated), Redis, the ledger
 * invariant, and whether background work is keeping up, each as one plain sentence.
 */
export async function runDoctor(
  config: Config,
  db: Database | undefined,
  now: Date,
  openError?: unknown,
): Promise<Check[]> {
  const checks: Check[] = [...configChecks(config)];
  if (!db) {
    checks.push({
      name: 'database',
      ok: false,
      detail: `The database could not be opened: ${openError instanceof Error ? openError.message : String(openError)}`,
    });
  } else {
    checks.push(...(await databaseChecks(db, now)));
  }
  checks.push(await redisCheck(config));
  return checks;
}

function configChecks(config: Config): Check[] {
  const checks: Check[] = [];
  const production = isProduction(config);
  checks.push({
    name: 'configuration',
    ok: true,
    detail: `Every variable parses (NODE_ENV=${config.NODE_ENV}).`,
  });
  if (production && !config.DATABASE_URL)
    checks.push({
      name: 'database setting',
      ok: false,
      detail:
        'NODE_ENV=production runs on the embedded PGlite database: one process only, no scaling out. Set DATABASE_URL to a PostgreSQL database.',
    });
  if (production && !config.REDIS_URL)
    checks.push({
      name: 'redis setting',
      ok: false,
      detail:
        'REDIS_URL is not set: rate limits count per process, so N instances allow N times the limit. Set REDIS_URL when running more than one instance.',
    });
  const publicUrl = publicUrlProblem(config);
  if (publicUrl) checks.push({ name: 'public URL', ok: false, detail: publicUrl });
  if (production && config.METRICS_PORT === undefined && !config.METRICS_TOKEN)
    checks.push({
      name: 'metrics',
      ok: true,
      detail: '/metrics is off (production without METRICS_PORT or METRICS_TOKEN): set one to let Prometheus scrape.',
    });
  if (production && !config.ROUTER_SECRET)
    checks.push({
      name: 'federation',
      ok: true,
      detail:
        'ROUTER_SECRET is not set: the federation router cannot reach _service/_entities (fine without a router).',
    });
  return checks;
}

async function databaseChecks(db: Database, now: Date): Promise<Check[]> {
  const checks: Check[] = [];
  try {
    await db.execute(sql`select 1`);
    checks.push({ name: 'database', ok: true, detail: 'The database answers.' });
  } catch (error) {
    return [{ name: 'database', ok: false, detail: `The database does not answer: ${(error as Error).message}` }];
  }
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  const [applied] = await queryRows<{ n: unknown }>(
    db,
    sql`select count(*) as n from drizzle.__drizzle_migrations`,
  ).catch(() => [{ n: 0 }]);
  const count = toSafeNumber(applied?.n ?? 0);
  checks.push(
    count >= journal.entries.length
      ? { name: 'migrations', ok: true, detail: `All ${journal.entries.length} migrations are applied.` }
      : {
          name: 'migrations',
          ok: false,
          detail: `${journal.entries.length - count} of ${journal.entries.length} migrations are not applied: run \`npm run migrate\` (or start once with MIGRATE_ON_START=true).`,
        },
  );
  for (const environment of ['sandbox', 'production'] as const) {
    const total = await ledger.totalOf(db, environment);
    checks.push(
      total === 0n
        ? {
            name: `ledger (${environment})`,
            ok: true,
            detail: 'Every ledger entry is balanced: the entries sum to zero.',
          }
        : {
            name: `ledger (${environment})`,
            ok: false,
            detail: `The ${environment} ledger entries sum to ${total} kobo instead of zero: a posting is unbalanced. Stop money movement and investigate the newest postings.`,
          },
    );
  }
  const at = now.toISOString();
  const [jobs] = await queryRows<{ failed: unknown; overdue: unknown }>(
    db,
    sql`select count(*) filter (where status = 'failed') as failed,
      count(*) filter (where status = 'pending' and run_at < ${at}::timestamptz - interval '5 minutes'
        and (locked_until is null or locked_until < ${at}::timestamptz)) as overdue
    from jobs where status in ('failed', 'pending')`,
  );
  const failed = toSafeNumber(jobs?.failed ?? 0);
  const overdue = toSafeNumber(jobs?.overdue ?? 0);
  checks.push({
    name: 'jobs',
    ok: overdue === 0,
    detail:
      overdue > 0
        ? `${overdue} jobs are more than 5 minutes overdue: are workers running (WORKERS=true on some instance)? See \`admin queue\`.`
        : failed > 0
          ? `Workers keep up; ${failed} jobs failed for good: see \`admin failed-jobs\`.`
          : 'Workers keep up and no job has failed for good.',
  });
  const events = await unstampedBacklog(db);
  const lagSeconds = events.oldestSeconds;
  checks.push({
    name: 'event stamping',
    ok: lagSeconds < 60,
    detail:
      lagSeconds < 60
        ? 'Events are stamped in order without delay.'
        : `${events.count} events have waited ${Math.round(lagSeconds)} s for their seq: no instance runs workers (WORKERS=false everywhere), or the relay's rounds fail (see the logs for event relay errors).`,
  });
  return checks;
}

async function redisCheck(config: Config): Promise<Check> {
  if (!config.REDIS_URL)
    return { name: 'redis', ok: true, detail: 'No Redis configured: limits are per process (fine for one instance).' };
  const redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return { name: 'redis', ok: true, detail: 'Redis answers.' };
  } catch (error) {
    return {
      name: 'redis',
      ok: false,
      detail: `Redis at REDIS_URL does not answer (${(error as Error).message}): limits fall back to per process counts.`,
    };
  } finally {
    redis.disconnect();
  }
}
