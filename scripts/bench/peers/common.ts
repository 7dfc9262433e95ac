/**
 * What every standalone peer shares, written the way a hand-made service would write it (plain `pg`,
 * no gateway code): the gateway's mandatory work on an authenticated read — the key's SHA-256 looked
 * up in PostgreSQL and cached for a second, one count in an in-memory rate-limit store (the gateway's
 * store without REDIS_URL), one JSON log line at the default level — and the gateway's own 20-field
 * `User` type, taken from schema/users.graphql, over the same rows.
 */
import { hash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Kind, parse, print } from 'graphql';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import pino from 'pino';
import { RateLimiterMemory } from 'rate-limiter-flexible';

/** The fields GET /api/v1/user/me answers with, in its order: the 20-field `me`. */
export const USER_FIELDS = [
  'id',
  'createdAt',
  'updatedAt',
  'deletedDate',
  'email',
  'phone',
  'firstName',
  'lastName',
  'name',
  'haveTransactionPin',
  'verified',
  'resetToken',
  'resetTokenExpiry',
  'dob',
  'isAdmin',
  'deviceId',
  'deviceIp',
  'deviceModel',
  'platform',
  'lastLoggedIn',
] as const;

export const ME_QUERY = `query Me { me { ${USER_FIELDS.join(' ')} } }`;

/** SDL of a schema holding the gateway's `User` (its 20 scalar fields, as declared) and `Query.me`. */
export function userSchemaSdl(): string {
  const document = parse(readFileSync('schema/users.graphql', 'utf8'));
  const user = document.definitions.find(
    (d) => d.kind === Kind.OBJECT_TYPE_DEFINITION && d.name.value === 'User',
  ) as import('graphql').ObjectTypeDefinitionNode;
  const wanted = new Set<string>(USER_FIELDS);
  const fields = (user.fields ?? []).filter((f) => wanted.has(f.name.value));
  if (fields.length !== USER_FIELDS.length) throw new Error('schema/users.graphql no longer has the 20 REST fields');
  const type = print({ ...user, interfaces: [], directives: [], fields });
  return `scalar DateTime\nscalar SafeInt\n${type}\ntype Query { me: User! }\n`;
}

interface UserRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  deleted_date: Date | null;
  email: string;
  phone: string | null;
  first_name: string | null;
  last_name: string | null;
  transaction_pin_hash: string | null;
  verified: boolean;
  dob: string | null;
  is_admin: boolean;
  device_id: string | null;
  device_ip: string | null;
  device_model: string | null;
  platform: string | null;
  last_logged_in: Date | null;
}

export interface Caller {
  keyId: string;
  /** The key's environment (`sandbox` or `production`), which the gateway's own resolvers read. */
  environment: 'sandbox' | 'production';
  user: UserRow;
}

/** The 20 fields as JSON (dates as ISO strings), as REST and GraphQL both answer them. */
export function userJson(row: UserRow): Record<(typeof USER_FIELDS)[number], unknown> {
  return {
    id: row.id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    deletedDate: row.deleted_date?.toISOString() ?? null,
    email: row.email,
    phone: row.phone,
    firstName: row.first_name,
    lastName: row.last_name,
    name: [row.first_name, row.last_name].filter(Boolean).join(' '),
    haveTransactionPin: row.transaction_pin_hash !== null,
    verified: row.verified,
    resetToken: null,
    resetTokenExpiry: null,
    dob: row.dob,
    isAdmin: row.is_admin,
    deviceId: row.device_id,
    deviceIp: row.device_ip,
    deviceModel: row.device_model,
    platform: row.platform,
    lastLoggedIn: row.last_logged_in?.toISOString() ?? null,
  };
}

export interface Peer {
  /** The caller for a request's key, or undefined (401); counts one request against the caller. */
  authenticate(headers: Record<string, string | string[] | undefined>): Promise<Caller | undefined>;
  /** One line per request, as the gateway writes at its default level. */
  logRequest(fields: { requestId: string; keyId?: string; route: string; statusCode: number; started: bigint }): void;
  requestId(): string;
  close(): Promise<void>;
}

const KEY_SHAPE = /^pgw_(sbx|live)_[A-Za-z0-9_-]{43}$/;

/** The key's SHA-256 in hex, with Node's one-shot hash (as the gateway hashes it). */
const sha256 = (key: string): string => hash('sha256', key, 'hex');

export function createPeer(databaseUrl: string): Peer {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const cache = new LRUCache<string, Caller>({ max: 10_000, ttl: 1000 });
  const limiter = new RateLimiterMemory({ points: 1_000_000_000, duration: 60, keyPrefix: 'perCredential' });
  // pino's own asynchronous writer in batches of the gateway's size (16 KiB, written at least every
  // 250 ms; the gateway's batchedStdout in src/observability/log-writer.ts batches the same amount
  // its own way).
  const log = pino(
    { level: process.env.LOG_LEVEL ?? 'info' },
    pino.destination({ dest: 1, sync: false, minLength: 16_384, maxWrite: 65_536, periodicFlush: 250 }),
  );
  return {
    async authenticate(headers) {
      const given = headers['x-api-key'];
      const key = Array.isArray(given) ? given[0] : given;
      if (!key || !KEY_SHAPE.test(key)) return undefined;
      const hash = sha256(key);
      let caller = cache.get(hash);
      if (!caller) {
        const { rows } = await pool.query<UserRow & { key_id: string; key_environment: 'sandbox' | 'production' }>(
          `select k.id as key_id, k.environment as key_environment, u.* from api_keys k join users u on u.id = k.user_id
            where k.key_hash = $1 and k.revoked_at is null`,
          [hash],
        );
        const row = rows[0];
        if (!row) return undefined;
        caller = { keyId: row.key_id, environment: row.key_environment, user: row };
        cache.set(hash, caller);
      }
      await limiter.consume(`cred:${caller.keyId}`);
      return caller;
    },
    logRequest({ requestId, keyId, route, statusCode, started }) {
      log.info(
        {
          reqId: requestId,
          credentialId: keyId,
          method: 'GET',
          route,
          statusCode,
          durationMs: Math.round(Number(process.hrtime.bigint() - started) / 100_000) / 10,
        },
        'request completed',
      );
    },
    requestId: () => randomUUID(),
    close: () => pool.end(),
  };
}

/** The `me` resolver every GraphQL peer runs: the caller's own row, or Unauthorized. */
export function meResolver(_root: unknown, _args: unknown, context: { caller?: Caller }) {
  if (!context.caller) throw new Error('Unauthorized');
  return userJson(context.caller.user);
}

/** What a Fastify reply offers the per-request work: its header, status and the socket's finish. */
interface ReplyLike {
  header(name: string, value: string): unknown;
  statusCode: number;
  raw: { once(event: 'finish', listener: () => void): unknown };
}

/**
 * The GraphQL context of the Fastify-based peers (Apollo, Mercurius), doing the mandatory work:
 * `x-request-id`, the key looked up and counted, and one log line once the answer is sent.
 */
export function graphqlContext(peer: Peer) {
  return async (request: { headers: Record<string, string | string[] | undefined> }, reply: ReplyLike) => {
    const started = process.hrtime.bigint();
    const requestId = peer.requestId();
    reply.header('x-request-id', requestId);
    const caller = await peer.authenticate(request.headers);
    reply.raw.once('finish', () =>
      peer.logRequest({
        requestId,
        route: '/graphql',
        statusCode: reply.statusCode,
        started,
        ...(caller ? { keyId: caller.keyId } : {}),
      }),
    );
    return caller ? { caller } : {};
  };
}

/** Prints the ready line the harness waits for. */
export function announce(port: number): void {
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid, port })}\n`);
}

export const databaseUrl = (): string => {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('peers read the gateway rows from PostgreSQL: set DATABASE_URL');
  return url;
};
