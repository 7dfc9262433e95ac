import { sql } from 'drizzle-orm';
import {
  bigserial,
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt, updatedAt, xid8 } from './columns.js';

export const environmentEnum = pgEnum('environment', ['sandbox', 'production']);
export const permissionEnum = pgEnum('api_key_permission', [
  'READ_ONLY',
  'TRANSACTIONS',
  'ACCOUNT_MANAGEMENT',
  'FULL_ACCESS',
]);

/** A person with a login. Accounts span both environments; what they own is per environment. */
export const users = pgTable(
  'users',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedDate: timestamp('deleted_date', { withTimezone: true, mode: 'date' }),
    email: text('email').notNull(),
    phone: text('phone'),
    firstName: text('first_name'),
    lastName: text('last_name'),
    /** argon2id; null for users made by the admin CLI until they set one (password reset). */
    passwordHash: text('password_hash'),
    transactionPinHash: text('transaction_pin_hash'),
    verified: boolean('verified').notNull().default(false),
    dob: text('dob'),
    isAdmin: boolean('is_admin').notNull().default(false),
    deviceId: text('device_id'),
    deviceIp: text('device_ip'),
    deviceModel: text('device_model'),
    platform: text('platform'),
    lastLoggedIn: timestamp('last_logged_in', { withTimezone: true, mode: 'date' }),
  },
  (t) => [uniqueIndex('users_email_key').on(sql`lower(${t.email})`)],
);

/** A required reference to a user (`user_id` unless named otherwise). */
export const userRef = (name = 'user_id') =>
  uuid(name)
    .notNull()
    .references(() => users.id);

/** The owner of a per-user, per-environment row: what tenancy checks filter on. */
export const ownerColumns = () => ({
  userId: userRef(),
  environment: environmentEnum('environment').notNull(),
});

/** A business account, owned by one user, under which business customers live. */
export const businesses = pgTable(
  'businesses',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ownerUserId: userRef('owner_user_id'),
    name: text('name').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('businesses_owner_idx').on(t.ownerUserId)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: userRef(),
    name: text('name').notNull(),
    environment: environmentEnum('environment').notNull(),
    permission: permissionEnum('permission').notNull().default('READ_ONLY'),
    /** SHA-256 of the full key, hex. The key itself is never stored. */
    keyHash: text('key_hash').notNull(),
    /** The first characters of the key, shown in listings so a person can tell keys apart. */
    displayPrefix: text('display_prefix').notNull(),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [uniqueIndex('api_keys_hash_key').on(t.keyHash), index('api_keys_user_idx').on(t.userId)],
);

/**
 * The outbox. Domain code inserts a row in the same transaction as the change it describes;
 * `seq` stays null until the relay stamps it in commit order (see domain/events/relay.ts).
 */
export const events = pgTable(
  'events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    seq: bigint('seq', { mode: 'number' }),
    txid: xid8('txid').notNull().default(sql`pg_current_xact_id()`),
    /**
     * Insertion order: the relay stamps one transaction's events in the order they were written.
     * `created_at` is the operation's clock reading, often the same for every event of an operation,
     * and `id` is random, so neither can order them.
     */
    ordinal: bigserial('ordinal', { mode: 'number' }).notNull(),
    type: text('type').notNull(),
    userId: userRef(),
    environment: environmentEnum('environment').notNull(),
    data: jsonb('data').notNull(),
    createdAt: createdAt(),
    /**
     * When the row was written (the database's clock, in the statement that inserts it: on the
     * money paths the transaction's last before its commit), for the
     * relay's commit → `seq` lag. `created_at` is the operation's clock reading, taken before its
     * transaction began, so a lag counted from it holds the request's own time in the database too.
     * Null on rows written before the column existed.
     */
    writtenAt: timestamp('written_at', { withTimezone: true }).default(sql`clock_timestamp()`),
    /**
     * The trace context of the request that wrote the event (`{"traceContext": …}`), null when it
     * ran in no trace: the relay merges it into the payload of each delivery job it fans out, so a
     * delivery's trace still links to the request that caused it (domain/events/fan-out.ts).
     */
    traceContext: jsonb('trace_context'),
    /**
     * The id the event had where it came from, null for the gateway's own: a facade keeps the
     * upstream's webhook `id` (any string), and partners see it as the event's id. Unique per
     * owner, so an upstream's repeat of an event is stored once (domain/facade/inbound-events.ts).
     */
    sourceId: text('source_id'),
  },
  (t) => [
    /**
     * Stamped rows only. Every event is written unstamped and stamped by a later update, so an
     * index holding nulls would gain a dead null entry per event, kept until vacuum; the planner
     * could take those for the relay's `seq is null` lookup as a bitmap scan (which never marks
     * dead entries) and read every event stamped since. Readers only ask for stamped rows
     * (`seq > n`, `seq is not null`, `max(seq)`).
     */
    uniqueIndex('events_seq_stamped_key').on(t.seq).where(sql`${t.seq} is not null`),
    index('events_owner_seq_stamped_idx').on(t.userId, t.environment, t.seq).where(sql`${t.seq} is not null`),
    index('events_unstamped_idx').on(t.txid, t.ordinal).where(sql`${t.seq} is null`),
    /** Retention prunes by age. */
    index('events_created_idx').on(t.createdAt),
    uniqueIndex('events_source_key').on(t.userId, t.environment, t.sourceId).where(sql`${t.sourceId} is not null`),
  ],
);

/**
 * How far webhook fan-out has gone: every event with `seq` up to `seq` has its deliveries and their
 * jobs. One row (`id` 1), advanced by the relay under its lock in the transaction that writes the
 * deliveries (domain/events/fan-out.ts). A cursor rather than "the events this round stamped", so
 * events stamped by any relay (one of an older release included) are fanned out exactly once.
 */
export const eventFanOut = pgTable('event_fan_out', {
  id: integer('id').primaryKey(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
});

export const jobStatusEnum = pgEnum('job_status', ['pending', 'done', 'failed']);

/** Background work, claimed with a lease so any number of workers run each job once at a time. */
export const jobs = pgTable(
  'jobs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    kind: text('kind').notNull(),
    payload: jsonb('payload').notNull().default({}),
    status: jobStatusEnum('status').notNull().default('pending'),
    runAt: timestamp('run_at', { withTimezone: true, mode: 'date' }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** Which worker lane runs it (money, webhooks, polling, maintenance): each lane has its own concurrency. */
    lane: text('lane').notNull().default('default'),
    /** Whose work it is (a user id; '' for the system's own): claims take turns across tenants. */
    tenant: text('tenant').notNull().default(''),
    /** Jobs sharing a key (a webhook endpoint) are limited in how many run at once. */
    concurrencyKey: text('concurrency_key'),
    /**
     * A delivery's event `seq`: claims take jobs due at the same moment in this order, so an
     * endpoint's first attempts start in commit order (domain/jobs/job-claims.ts). Null for other kinds.
     */
    eventSeq: bigint('event_seq', { mode: 'number' }),
    /**
     * The sandbox test clock the job's due time was read from (docs/sandbox.md#test-clocks); null
     * for every other job. `run_at` is still wall time: an advance moves the clock's jobs earlier.
     */
    testClockId: uuid('test_clock_id'),
    lockedBy: text('locked_by'),
    /** A fresh token per claim: a worker whose lease was taken over can no longer record or fence. */
    leaseToken: uuid('lease_token'),
    lockedUntil: timestamp('locked_until', { withTimezone: true, mode: 'date' }),
    lastError: text('last_error'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('jobs_lane_tenant_due_idx').on(t.lane, t.tenant, t.runAt).where(sql`${t.status} = 'pending'`),
    index('jobs_concurrency_key_idx').on(t.concurrencyKey).where(sql`${t.status} = 'pending'`),
    /** Counts a tenant's pending work for its cap. */
    index('jobs_tenant_pending_idx').on(t.tenant).where(sql`${t.status} = 'pending'`),
    index('jobs_finished_idx').on(t.updatedAt).where(sql`${t.status} <> 'pending'`),
    /** A test clock's pending jobs, for its advance; holds no row of any other job. */
    index('jobs_test_clock_idx')
      .on(t.testClockId, t.runAt)
      .where(sql`${t.status} = 'pending' and ${t.testClockId} is not null`),
  ],
);

/** A partner URL that receives signed webhooks for one user and environment. */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: userRef(),
    environment: environmentEnum('environment').notNull(),
    url: text('url').notNull(),
    description: text('description'),
    /** Event kinds delivered; ['*'] means every kind. */
    eventTypes: text('event_types').array().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    disabledReason: text('disabled_reason'),
    /** Since when every attempt has failed (null while healthy): disabled after WEBHOOK_DISABLE_AFTER_MS. */
    failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    /** The circuit breaker: while in the future, deliveries wait instead of being sent. */
    circuitOpenUntil: timestamp('circuit_open_until', { withTimezone: true, mode: 'date' }),
    /** The signing secret, sealed (AES-256-GCM) under the configured key and bound to this row. */
    secretSealed: text('secret_sealed').notNull(),
    /** During a rotation, the previous secret keeps signing until this time. */
    previousSecretSealed: text('previous_secret_sealed'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('webhook_endpoints_owner_idx').on(t.userId, t.environment)],
);

export const deliveryStatusEnum = pgEnum('webhook_delivery_status', ['pending', 'succeeded', 'failed']);

/** One event to one endpoint; its attempts follow the seed's retry schedule. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    status: deliveryStatusEnum('status').notNull().default('pending'),
    attemptCount: integer('attempt_count').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
    uniqueIndex('webhook_deliveries_event_endpoint_key').on(t.eventId, t.endpointId),
  ],
);

/** Every HTTP attempt of a delivery, for the delivery log. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id),
    attemptNumber: integer('attempt_number').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
    durationMs: integer('duration_ms').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    responseSnippet: text('response_snippet'),
    /** True when the attempt was asked for by hand (re-send). */
    manual: boolean('manual').notNull().default(false),
  },
  (t) => [uniqueIndex('webhook_attempts_delivery_number_key').on(t.deliveryId, t.attemptNumber)],
);
