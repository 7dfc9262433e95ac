import { and, eq, sql } from 'drizzle-orm';
import { type Database, queryRows, type Tx } from '../../db/client.js';
import { facadeRecordStates } from '../../db/facade-schema.js';
import type { Environment } from '../auth/permissions.js';
import { eventTraceContext } from '../events/outbox.js';
import { hintRelays } from '../events/relay.js';
import type { InboundEnvelope } from './inbound-envelope.js';

/** Whose log an event is written to: a partner account in the facade's environment. */
export interface LogOwner {
  userId: string;
  environment: Environment;
}

/**
 * Each group whose events name a record (`data.reference`), with its kinds in lifecycle order: the
 * spec's kinds (Events), and this gateway's `bill.payment.failed` twin. Two events of one record
 * stamped in the same second are ordered by this (`created` is in whole seconds).
 */
export const RECORD_KINDS: Record<string, readonly string[]> = {
  bill: ['bill.payment.successful', 'bill.payment.failed'],
  deposit: ['deposit.initiated', 'deposit.pending', 'deposit.completed', 'deposit.failed'],
  offramp: [
    'offramp.initiated',
    'offramp.deposit_received',
    'offramp.processing',
    'offramp.fiat_sent',
    'offramp.completed',
    'offramp.failed',
  ],
};

/** What the facade knows of one upstream record, as its events set it. */
export interface RecordState {
  group: string;
  reference: string;
  /** The kind of the newest event taken for it. */
  kind: string;
  at: Date;
  /** Every kind taken for it, in the order they came. */
  kindsTaken: string[];
}

/** Which way an event came: the upstream's webhook, or the gap-filling job's lists. */
export type EventSource = 'webhook' | 'gap-fill';

/** Rolls back a write whose event turned out to be taken already. */
class AlreadyTaken extends Error {}

/** The record an event names, when its group has records and its data a reference. */
export function recordNamed(
  envelope: Pick<InboundEnvelope, 'type' | 'data'>,
): { group: string; reference: string } | undefined {
  const group = Object.keys(RECORD_KINDS).find((name) => RECORD_KINDS[name]!.includes(envelope.type));
  const reference = envelope.data['reference'];
  if (!group || typeof reference !== 'string' || reference.length === 0 || reference.length > 255) return undefined;
  return { group, reference };
}

/**
 * The one way an upstream event enters a facade's events log, whether its webhook brought it
 * (inbound-webhooks.ts) or the gap-filling job found it (gap-fill.ts). It is taken once:
 * - per `id`, as the spec asks receivers to deduplicate (a unique index over the owner and `id`);
 * - per record and kind across the two ways: an event the job finds naming a record
 *   (`data.reference`) whose kind was already taken is a repeat, and so is a webhook of a kind the
 *   job took. The job cannot know the id the upstream gave an event it never delivered, so this is
 *   what keeps a found event and a late webhook from both reaching the partner. Two webhooks of
 *   one kind are two events unless their `id`s match: the upstream alone knows they differ.
 * An event older than the one that set its record's state is still written (the log holds what
 * the upstream said), but the record keeps its state. The record's row is locked first (the
 * contended row), then the event is written, in one short transaction.
 */
export class UpstreamEventLog {
  constructor(private readonly db: Database) {}

  /** Writes the event unless taken already; true when it was written. */
  async take(owner: LogOwner, envelope: InboundEnvelope, source: EventSource): Promise<boolean> {
    const record = recordNamed(envelope);
    try {
      await this.db.transaction(async (tx) => {
        if (record && !(await this.moveRecord(tx, owner, record, envelope, source))) throw new AlreadyTaken();
        const [inserted] = await queryRows<{ id: string }>(
          tx,
          sql`insert into events (type, user_id, environment, data, created_at, trace_context, source_id)
            values (${envelope.type}, ${owner.userId}, ${owner.environment}, ${JSON.stringify(envelope.data)}::jsonb,
              ${envelope.created.toISOString()}::timestamptz, ${eventTraceContext()}::jsonb, ${envelope.id})
            on conflict (user_id, environment, source_id) where source_id is not null do nothing
            returning id`,
        );
        if (!inserted) throw new AlreadyTaken();
      });
    } catch (error) {
      if (error instanceof AlreadyTaken) return false;
      throw error;
    }
    hintRelays();
    return true;
  }

  /** What the facade knows of the caller's record, or undefined when no event named it. */
  async stateOf(owner: LogOwner, group: string, reference: string): Promise<RecordState | undefined> {
    const [row] = await this.db
      .select()
      .from(facadeRecordStates)
      .where(
        and(
          eq(facadeRecordStates.userId, owner.userId),
          eq(facadeRecordStates.environment, owner.environment),
          eq(facadeRecordStates.recordGroup, group),
          eq(facadeRecordStates.reference, reference),
        ),
      );
    if (!row) return undefined;
    return { group, reference, kind: row.stateKind, at: row.stateAt, kindsTaken: row.kindsTaken };
  }

  /** Whether each kind is already taken for the owner's records, by reference (the job asks before it writes). */
  async kindsTaken(owner: LogOwner, group: string, references: string[]): Promise<Map<string, string[]>> {
    if (references.length === 0) return new Map();
    const rows = await queryRows<{ reference: string; kinds_taken: string[] }>(
      this.db,
      sql`/* facadeKindsTaken */ select reference, kinds_taken from facade_record_states
        where user_id = ${owner.userId} and environment = ${owner.environment} and record_group = ${group}
          and reference = any(${`{${references.map(arrayItem).join(',')}}`}::text[])`,
    );
    return new Map(rows.map((row) => [row.reference, row.kinds_taken]));
  }

  /**
   * Takes the event's kind for its record: false when it repeats one taken the other way (or, for
   * the job, any way). The state moves to the event only when it is newer than the one that set
   * it (or as new, and later in the lifecycle); an older event is added to the kinds taken and
   * leaves the state as it was.
   */
  private async moveRecord(
    tx: Tx,
    owner: LogOwner,
    record: { group: string; reference: string },
    envelope: InboundEnvelope,
    source: EventSource,
  ): Promise<boolean> {
    const order = `{${RECORD_KINDS[record.group]!.map(arrayItem).join(',')}}`;
    const at = envelope.created.toISOString();
    const filled = source === 'gap-fill';
    // A webhook repeats only what the job found; what the job finds repeats whatever was taken.
    const repeats = filled ? sql`facade_record_states.kinds_taken` : sql`facade_record_states.kinds_filled`;
    const filledNow = filled
      ? sql`array_append(facade_record_states.kinds_filled, excluded.state_kind)`
      : sql`facade_record_states.kinds_filled`;
    const moved = await queryRows(
      tx,
      sql`/* facadeMoveRecord */ insert into facade_record_states
          (user_id, environment, record_group, reference, state_kind, state_at, kinds_taken, kinds_filled)
        values (${owner.userId}, ${owner.environment}, ${record.group}, ${record.reference}, ${envelope.type},
          ${at}::timestamptz, array[${envelope.type}]::text[], ${filled ? sql`array[${envelope.type}]::text[]` : sql`'{}'::text[]`})
        on conflict (user_id, environment, record_group, reference) do update set
          kinds_taken = case when excluded.state_kind = any(facade_record_states.kinds_taken)
            then facade_record_states.kinds_taken
            else array_append(facade_record_states.kinds_taken, excluded.state_kind) end,
          kinds_filled = ${filledNow},
          state_kind = case when ${newer()} then excluded.state_kind else facade_record_states.state_kind end,
          state_at = case when ${newer()} then excluded.state_at else facade_record_states.state_at end,
          updated_at = now()
        where not (excluded.state_kind = any(${repeats}))
        returning 1 as moved`,
    );
    return moved.length > 0;

    function newer() {
      return sql`(excluded.state_at > facade_record_states.state_at or (excluded.state_at = facade_record_states.state_at
        and array_position(${order}::text[], excluded.state_kind) > array_position(${order}::text[], facade_record_states.state_kind)))`;
    }
  }
}

/** One element of a PostgreSQL array literal, quoted. */
function arrayItem(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}
