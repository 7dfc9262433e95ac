import { asc, gt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { preparedOnce } from '../../db/prepared-once.js';
import { events } from '../../db/schema.js';
import type { Principal } from '../auth/principal.js';
import { outsideTraces } from '../../observability/tracing.js';
import type { StoredEvent } from './event.js';
import { toStoredEvent } from './event-row.js';
import { eventStore } from './outbox.js';
import { latestEventSeq, onStampedBatch } from './relay.js';

interface Subscriber {
  userId: string;
  environment: string;
  types: ReadonlySet<string> | undefined;
  push(event: StoredEvent): void;
  /** Live events offered and not yet sent (at most MAX_QUEUED_EVENTS). */
  queued(): number;
}

const REPLAY_PAGE = 500;

/**
 * The most live events one subscriber holds in memory while it reads slower than they arrive (its
 * socket's buffer is full, so graphql-ws waits before taking the next). Past it the subscriber's
 * queue is dropped and its events are read again from the events table after the last one it was
 * sent, in `seq` order, as a replay is: memory stays bounded and nothing is lost or repeated.
 */
export const MAX_QUEUED_EVENTS = 1000;

/** Most events the tailer reads in one statement. */
const TAIL_PAGE = 1000;

/**
 * The tailer's read, built once per handle: it runs at every doorbell ring and every poll, and
 * building it through the query builder each time cost more of the process than running it.
 */
const eventsAfter = preparedOnce((db) =>
  db
    .select()
    .from(events)
    .where(gt(events.seq, sql.placeholder('after')))
    .orderBy(asc(events.seq))
    .limit(TAIL_PAGE)
    .prepare('event_feed_events_after'),
);

interface StreamState {
  closed: boolean;
  wake: (() => void) | undefined;
  /** The queue overflowed: what it dropped is read from the store before live events resume. */
  behind: boolean;
}

/**
 * Live events for subscriptions on this instance. One tailer reads the events table by `seq` for
 * all subscribers (not one query per subscriber), woken by the relay's doorbell and by a poll, so
 * events stamped by any instance reach subscribers on every instance.
 */
export class EventFeed {
  /** Subscribers by owner (`userId` NUL `environment`): an event is offered only to its owner's. */
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private count = 0;
  private cursor: number | undefined;
  private cursorRead: Promise<void> | undefined;
  private polling: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly pollMs = 250,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    onStampedBatch(db, (batch) => this.offer(batch));
  }

  /**
   * Events this process just stamped, in `seq` order: handed to subscribers at once when they
   * follow on from the cursor (no read back from the table); otherwise read as usual.
   */
  offer(batch: readonly StoredEvent[]): void {
    if (this.count === 0 || batch.length === 0) return;
    if (this.polling || this.cursor === undefined || batch[0]!.seq !== this.cursor + 1) {
      this.wake();
      return;
    }
    for (const event of batch) this.deliver(event);
    this.cursor = batch.at(-1)!.seq!;
  }

  /**
   * Ring the doorbell: read new events now. The read serves every subscriber, so it is in no trace,
   * whoever woke it (a subscription starting the feed's poll timer, a relay round, a ring).
   */
  wake(): void {
    if (this.count === 0) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    this.polling = outsideTraces(() =>
      this.poll()
        .catch(this.onError)
        .finally(() => {
          this.polling = undefined;
          if (this.again) {
            this.again = false;
            this.wake();
          }
        }),
    );
  }

  /**
   * The caller's events after `after` (or from now), replayed from the store and then live, with
   * no gap and no duplicate: the subscriber is registered before the replay reads, and anything
   * both paths deliver is dropped by `seq`.
   */
  subscribe(
    principal: Principal,
    types: readonly string[] | undefined,
    after: number | undefined,
  ): AsyncIterableIterator<StoredEvent> {
    const state: StreamState = { closed: false, wake: undefined, behind: false };
    const stream = this.stream(principal, types, after, state);
    // An async generator suspended at an await cannot be ended from outside until it resumes;
    // `return` therefore first wakes it, so a client that leaves is unregistered at once.
    return {
      next: () => stream.next(),
      return: (value?: unknown) => {
        state.closed = true;
        state.wake?.();
        return stream.return(value as never);
      },
      throw: (error?: unknown) => stream.throw(error),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  private async *stream(
    principal: Principal,
    types: readonly string[] | undefined,
    after: number | undefined,
    state: StreamState,
  ): AsyncGenerator<StoredEvent> {
    const queue: StoredEvent[] = [];
    const subscriber: Subscriber = {
      userId: principal.userId,
      environment: principal.environment,
      types: types && types.length > 0 ? new Set(types) : undefined,
      push(event) {
        if (state.behind) return;
        if (queue.length >= MAX_QUEUED_EVENTS) {
          // Every event from here on is in the table, stamped: read again from there once the
          // subscriber catches up. An event is offered only once it is committed and stamped.
          queue.length = 0;
          state.behind = true;
        } else queue.push(event);
        state.wake?.();
      },
      queued: () => queue.length,
    };
    this.add(subscriber);
    try {
      // The feed's position is read before this subscriber's replay: an event stamped before it is
      // in the replay's read, one stamped after it is delivered live. (Read after the replay, an
      // event stamped in between was in neither.) "From now" starts there too.
      if (this.cursor === undefined) await this.readCursor();
      let last = after ?? this.cursor!;
      // The replay, and the read after an overflow: pages from the store after `last`. Live
      // events offered meanwhile queue up (and are dropped by `seq` if the read sent them).
      let replaying = after !== undefined;
      while (!state.closed) {
        if (state.behind) {
          state.behind = false;
          replaying = true;
        }
        while (replaying && !state.closed) {
          const page = await eventStore.listEventsAfter(this.db, principal, last, REPLAY_PAGE, types);
          for (const event of page) {
            last = event.seq!;
            yield event;
          }
          if (page.length < REPLAY_PAGE) replaying = false;
        }
        while (queue.length > 0 && !state.behind) {
          const event = queue.shift()!;
          if (event.seq! <= last) continue;
          last = event.seq!;
          yield event;
        }
        if (state.closed || state.behind) continue;
        await new Promise<void>((resolve) => (state.wake = resolve));
        state.wake = undefined;
      }
    } finally {
      this.remove(subscriber);
    }
  }

  get subscriberCount(): number {
    return this.count;
  }

  /** Live events held in memory for subscribers that have not taken them yet, over all of them. */
  get queuedEvents(): number {
    let queued = 0;
    for (const owners of this.subscribers.values()) for (const subscriber of owners) queued += subscriber.queued();
    return queued;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private add(subscriber: Subscriber): void {
    const key = `${subscriber.userId}\u0000${subscriber.environment}`;
    let owners = this.subscribers.get(key);
    if (!owners) this.subscribers.set(key, (owners = new Set()));
    owners.add(subscriber);
    this.count += 1;
    if (!this.timer) {
      this.timer = setInterval(() => this.wake(), this.pollMs);
      this.timer.unref();
    }
    this.wake();
  }

  private remove(subscriber: Subscriber): void {
    const key = `${subscriber.userId}\u0000${subscriber.environment}`;
    const owners = this.subscribers.get(key);
    if (!owners?.delete(subscriber)) return;
    this.count -= 1;
    if (owners.size === 0) this.subscribers.delete(key);
    if (this.count === 0) this.stop();
  }

  private deliver(event: StoredEvent): void {
    const owners = this.subscribers.get(`${event.userId}\u0000${event.environment}`);
    if (!owners) return;
    for (const subscriber of owners) if (!subscriber.types || subscriber.types.has(event.type)) subscriber.push(event);
  }

  /** The table's last `seq`, read once for the feed's first subscriber (shared by concurrent callers). */
  private async readCursor(): Promise<void> {
    this.cursorRead ??= latestEventSeq(this.db)
      .then((seq) => {
        this.cursor ??= seq;
      })
      .finally(() => {
        this.cursorRead = undefined;
      });
    await this.cursorRead;
  }

  private async poll(): Promise<void> {
    if (this.cursor === undefined) await this.readCursor();
    for (;;) {
      const rows = await eventsAfter(this.db).execute({ after: this.cursor! });
      for (const row of rows) {
        this.cursor = row.seq!;
        this.deliver(toStoredEvent(row));
      }
      if (rows.length < TAIL_PAGE) return;
    }
  }
}
