/**
 * Admin CLI: users, businesses and API keys.
 *
 *   npm run admin -- create-user --email ada@example.com [--first-name Ada] [--last-name Obi] [--phone +234…]
 *   npm run admin -- create-business --user <id|email> --name "Ada Stores"
 *   npm run admin -- create-key --user <id|email> --name "server" [--env sandbox|production] [--permission "Full Access"]
 *   npm run admin -- list-keys --user <id|email>
 *   npm run admin -- revoke-key --user <id|email> --key <key id>
 *   npm run admin -- key-controls --user <id|email> --key <key id> [--max-payout <naira>] [--ip-allow-list …]
 *   npm run admin -- rewrap-wallet-keys --env sandbox|production
 *   npm run admin -- facade-unknowns | facade-resolve   (a facade's operator queue: see admin/facade-commands.ts)
 *   npm run admin -- facade-webhook --upstream-key <key> [--secret <secret>] [--read-key <key>]   (facade mode)
 *   npm run admin -- queue | failed-jobs | retry-job | discard-job | failed-deliveries | retry-delivery |
 *                    discard-delivery | doctor   (background work and health: see admin-operations.ts)
 *
 * Add --json for machine-readable output; --help prints the usage. It uses the same DATABASE_URL /
 * PGLITE_DATA_DIR as the server; the embedded database can be open in one process only, so while a
 * server holds it the CLI says so and names the dashboard page or API route that does the same.
 */
import { parseArgs } from 'node:util';
import { loadConfig, publicUrlOf } from '../src/config.js';
import { DatabaseInUseError, openDatabase } from '../src/db/client.js';
import { ENVIRONMENTS, type Environment, parsePermissionLevel } from '../src/domain/auth/permissions.js';
import { systemClock } from '../src/domain/clock.js';
import { DomainError } from '../src/domain/errors.js';
import { isUuid } from '../src/domain/ids.js';
import { createServices, type Services } from '../src/services.js';
import { OPERATOR_COMMANDS, OperatorUsageError, runDoctorCommand, runOperatorCommand } from './admin-operations.js';
import { auditVerifyCommand, grantAppRoleCommand, ledgerCheckCommand } from './admin/ledger-commands.js';
import { reconBreaksCommand, reconcileCommand, reconResolveCommand, reconRunsCommand } from './admin/recon-commands.js';
import { keyControlsCommand } from './admin/controls-commands.js';
import { FACADE_COMMANDS, FACADE_OPTIONS, FacadeUsageError, runFacadeCommand } from './admin/facade-commands.js';
import { facadeWebhookCommand } from './admin/facade-webhook-command.js';
import type { DatabaseHandle } from '../src/db/client.js';

const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  create-user --email <email> [--first-name <name>] [--last-name <name>] [--phone <+234…>]
  create-business --user <id|email> --name <business name>
  create-key --user <id|email> --name <key name> [--env sandbox|production] [--permission "Read Only"|Transactions|"Account Management"|"Full Access"]
  list-keys --user <id|email>
  revoke-key --user <id|email> --key <key id>
  key-controls --user <id|email> --key <key id> [--max-payout <naira>] [--max-daily <naira>]
               [--max-daily-count N] [--max-hourly-count N] [--ip-allow-list "<cidr>,<cidr>"]
                                a key's payout limits and IP allow-list: shown, or the given ones changed
                                (blank or "default": the configured default; 0: no limit; "" list: none)
  rewrap-wallet-keys --env sandbox|production
  facade-webhook --upstream-key <key> [--secret <secret>] [--read-key <key>]
                                facade mode: the account's inbound webhook URL (shown), its upstream webhook
                                secret and the gap-filling job's read key (set); the account is the upstream key's
  queue                                     queue depth per job kind
  failed-jobs [--kind <kind>] [--limit N]   jobs that failed for good, with their last error
  retry-job --id <job> | --kind <kind>      put failed jobs back in line, due now
  discard-job --id <job> | --kind <kind>    set failed (or pending) jobs aside for good
  failed-deliveries [--limit N]             webhook deliveries out of retries, with the last answer
  retry-delivery --id <delivery>            send a failed delivery once more
  discard-delivery --id <delivery>          stop a pending delivery's retries
  doctor                                    check configuration, database, Redis, ledger (exit 1 on a problem)
  ledger-check [--latest]       run the ledger invariant check (or show the stored latest); exit code 4 when inconsistent
  audit-verify                  walk the audit trail's hash chain; exit code 4 when a record was edited or removed
  grant-app-role --role <name>  PostgreSQL, as the tables' owner: the application role's rights (no rewriting posted rows)
  reconcile [--provider <name>] [--date YYYY-MM-DD] [--env sandbox|production]
                                match providers' records with ours for a day (default yesterday; environments of
                                RECON_ENVIRONMENTS unless --env); exit code 4 on a break or a provider not read
  recon-runs [--limit N]        reconciliation runs, newest first, with notices (aged breaks, clearing past its window)
  recon-breaks [--open] [--limit N]
                                reconciliation breaks (missing_ours, missing_theirs, amount_differs, status_differs)
  recon-resolve <id> --note <text>
                                acknowledge an open break with what was found and done
  facade-unknowns [--all] [--limit N]
                                a facade's mutations whose outcome the upstream never showed (the operator
                                queue; --all: also those the matcher still looks for), oldest first
  facade-resolve <id> --reference <upstream bill reference> --note <text>
  facade-resolve <id> --failed --note <text>
                                settle one: with the upstream record that is it, or as not taken upstream

Options:
  --json   machine-readable output
  --help   this text

Uses DATABASE_URL, or the embedded database at PGLITE_DATA_DIR (default ./data/pglite), like the server.`;

const OPTIONS = {
  help: { type: 'boolean', short: 'h', default: false },
  json: { type: 'boolean', default: false },
  email: { type: 'string' },
  'first-name': { type: 'string' },
  'last-name': { type: 'string' },
  phone: { type: 'string' },
  user: { type: 'string' },
  name: { type: 'string' },
  env: { type: 'string', default: 'sandbox' },
  permission: { type: 'string' },
  key: { type: 'string' },
  id: { type: 'string' },
  kind: { type: 'string' },
  limit: { type: 'string' },
  role: { type: 'string' },
  latest: { type: 'boolean', default: false },
  provider: { type: 'string' },
  date: { type: 'string' },
  open: { type: 'boolean', default: false },
  note: { type: 'string' },
  'max-payout': { type: 'string' },
  'max-daily': { type: 'string' },
  'max-daily-count': { type: 'string' },
  'max-hourly-count': { type: 'string' },
  'ip-allow-list': { type: 'string' },
  ...FACADE_OPTIONS,
  'upstream-key': { type: 'string' },
  secret: { type: 'string' },
  'read-key': { type: 'string' },
} as const;

let parsed: ReturnType<typeof parseArgs<{ allowPositionals: true; options: typeof OPTIONS }>>;
try {
  parsed = parseArgs({ allowPositionals: true, options: OPTIONS });
} catch (error) {
  // An unknown or malformed option: one line and the usage, not a stack trace.
  process.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
  process.exit(2);
}
const { positionals, values } = parsed;

/** How to do a command through a running server, for when that server holds the embedded database. */
function throughServer(command: string | undefined, baseUrl: string): string {
  switch (command) {
    case 'create-user':
      return `sign up at ${baseUrl}/signup`;
    case 'create-business':
      return `use ${baseUrl}/dashboard/businesses`;
    case 'key-controls':
      return `use ${baseUrl}/dashboard/controls`;
    case 'facade-webhook':
      return `use ${baseUrl}/facade/upstream-webhook, or GET and PUT /api/v1/facade/upstream-webhook with the upstream key`;
    case 'create-key':
    case 'list-keys':
    case 'revoke-key':
      return `use ${baseUrl}/dashboard/keys, or /api/v1/api-keys (POST, GET, DELETE /:id) with a Full Access key`;
    default:
      return 'this command has no API; stop the server first';
  }
}

class UsageError extends Error {}

function required(name: keyof typeof values): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

async function findUserId(services: Services, ref: string): Promise<string> {
  const user = isUuid(ref) ? (await services.users.usersByIds([ref]))[0] : await services.users.userByEmail(ref);
  if (!user) throw new UsageError(`No user ${ref}`);
  return user.id;
}

type Output = { json: unknown; text: string; ok?: boolean };

function limitOf(fallback: number): number {
  if (values.limit === undefined) return fallback;
  const n = Number(values.limit);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new UsageError('--limit must be a whole number from 1 to 1000');
  return n;
}

async function run(services: Services, database: DatabaseHandle, command: string | undefined): Promise<Output> {
  switch (command) {
    case 'ledger-check':
      return ledgerCheckCommand(services, values.latest === true);
    case 'audit-verify':
      return auditVerifyCommand(services);
    case 'grant-app-role':
      return grantAppRoleCommand(database, required('role'));
    case 'reconcile': {
      // --env has a default for the key commands: only an --env actually given narrows the run.
      const envGiven = process.argv.some((a) => a === '--env' || a.startsWith('--env='));
      const environments = envGiven
        ? [values.env as Environment]
        : (services.config.RECON_ENVIRONMENTS.split(',') as Environment[]);
      if (!environments.every((e) => ENVIRONMENTS.includes(e)))
        throw new UsageError('--env must be sandbox or production');
      return reconcileCommand(services, { environments, provider: values.provider, date: values.date });
    }
    case 'recon-runs':
      return reconRunsCommand(services, limitOf(20));
    case 'recon-breaks':
      return reconBreaksCommand(services, values.open === true, limitOf(100));
    case 'recon-resolve': {
      const id = positionals[1] ?? values.id;
      if (!id) throw new UsageError('recon-resolve needs the break id: recon-resolve <id> --note "…"');
      return reconResolveCommand(services, id, required('note'));
    }
    case 'create-user': {
      const user = await services.users.createUser({
        email: required('email'),
        firstName: values['first-name'],
        lastName: values['last-name'],
        phone: values.phone,
      });
      return { json: user, text: `Created user ${user.id} <${user.email}>` };
    }
    case 'create-business': {
      const business = await services.users.createBusiness(
        await findUserId(services, required('user')),
        required('name'),
      );
      return { json: business, text: `Created business ${business.id} (${business.name})` };
    }
    case 'create-key': {
      const environment = values.env as Environment;
      if (!ENVIRONMENTS.includes(environment)) throw new UsageError('--env must be sandbox or production');
      const permission = values.permission === undefined ? 'READ_ONLY' : parsePermissionLevel(values.permission);
      if (!permission)
        throw new UsageError('--permission must be Read Only, Transactions, Account Management or Full Access');
      const userId = await findUserId(services, required('user'));
      const { key, apiKey } = await services.apiKeys.create({
        userId,
        name: required('name'),
        environment,
        permission,
      });
      return {
        json: { key, apiKey },
        text: `API key (${environment}, ${permission}; shown once): ${key}\nid: ${apiKey.id}`,
      };
    }
    case 'list-keys': {
      const keys = await services.apiKeys.list(await findUserId(services, required('user')));
      const lines = keys.map(
        (k) =>
          `${k.id}  ${k.displayPrefix.padEnd(16)} ${k.environment.padEnd(10)} ${k.permission.padEnd(18)} ${k.revokedAt ? 'revoked' : 'active '}  ${k.name}`,
      );
      return { json: keys, text: lines.join('\n') || 'No keys.' };
    }
    case 'revoke-key': {
      const revoked = await services.apiKeys.revoke(await findUserId(services, required('user')), required('key'));
      return { json: revoked, text: `Revoked ${revoked.id} (${revoked.name})` };
    }
    case 'key-controls':
      return keyControlsCommand(services, await findUserId(services, required('user')), required('key'), {
        maxPayout: values['max-payout'],
        maxDaily: values['max-daily'],
        maxDailyCount: values['max-daily-count'],
        maxHourlyCount: values['max-hourly-count'],
        ipAllowList: values['ip-allow-list'],
      });
    case 'facade-webhook':
      return facadeWebhookCommand(services, {
        upstreamKey: required('upstream-key'),
        secret: values.secret,
        readKey: values['read-key'],
      });
    case 'rewrap-wallet-keys': {
      const environment = required('env');
      if (!(ENVIRONMENTS as readonly string[]).includes(environment))
        throw new UsageError(`--env must be one of ${ENVIRONMENTS.join(', ')}`);
      // Every family's custodial keys are sealed under the same master keys.
      const results = [
        await services.solanaWallets.rewrapDataKeys(environment as Environment),
        await services.evmWallets.rewrapDataKeys(environment as Environment),
      ];
      const rewrapped = results.reduce((sum, r) => sum + r.rewrapped, 0);
      const failed = results.flatMap((r) => r.failed);
      if (failed.length)
        throw new UsageError(
          `Re-wrapped ${rewrapped}; ${failed.length} wallet key(s) did not open with the configured master keys (add their version back): ${failed.join(', ')}`,
        );
      return {
        json: { environment, rewrapped },
        text: `Re-wrapped ${rewrapped} custodial wallet key(s) in ${environment} with the newest master key`,
      };
    }
    default: {
      const faced = await runFacadeCommand(services, command, positionals, values);
      if (faced) return faced;
      const operated = await runOperatorCommand(services, command, values);
      if (operated) return operated;
      throw new UsageError(
        `Commands: create-user, create-business, create-key, list-keys, revoke-key, key-controls, rewrap-wallet-keys, facade-webhook, ledger-check, audit-verify, grant-app-role, reconcile, recon-runs, recon-breaks, recon-resolve, ${FACADE_COMMANDS.join(', ')}, ${OPERATOR_COMMANDS.join(', ')} (add --json for JSON output)`,
      );
    }
  }
}

async function main(): Promise<number> {
  if (values.help || positionals[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!positionals[0]) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  if (positionals[0] === 'doctor') return runDoctorCommand(values.json);
  // The CLI serves no traffic: no Redis (limits, doorbell), so nothing holds the process open.
  const config = loadConfig(process.env, { REDIS_URL: undefined });
  let database: Awaited<ReturnType<typeof openDatabase>>;
  try {
    database = await openDatabase({
      databaseUrl: config.DATABASE_URL,
      pgliteDataDir: config.PGLITE_DATA_DIR,
      migrationUrl: config.DATABASE_MIGRATION_URL,
      poolSize: 2,
    });
  } catch (error) {
    if (!(error instanceof DatabaseInUseError)) throw error;
    const message = `The embedded database at ${error.dataDir} is held by a running server (one process at a time): ${throughServer(positionals[0], publicUrlOf(config))}; or stop the server and run this again.`;
    if (values.json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
    else process.stderr.write(`${message}\n`);
    return 3;
  }
  try {
    const services = createServices(config, database.db, systemClock, () => undefined);
    const output = await run(services, database, positionals[0]);
    process.stdout.write(values.json ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text}\n`);
    // 4: the command ran and found something wrong (3 means the database was busy).
    return output.ok === false ? 4 : 0;
  } catch (error) {
    const usage =
      error instanceof UsageError ||
      error instanceof OperatorUsageError ||
      error instanceof FacadeUsageError ||
      error instanceof DomainError;
    const message = usage ? (error as Error).message : String(error);
    if (values.json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
    else process.stderr.write(`${message}\n`);
    return usage ? 2 : 1;
  } finally {
    await database.close();
  }
}

process.exitCode = await main();
