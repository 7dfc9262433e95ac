import { asc, gt } from 'drizzle-orm';
import type { Database } from '../../db/client.js';
import { events } from '../../db/schema.js';
import type { Principal } from '../auth/principal.js';
import type { StoredEvent } from './event.js';
import { toStoredEvent } from './event-row.js';
import { eventStore } from './outbox.js';
import { latestEventSeq } from './relay.js';

interface Subscriber {
  userId: string;
  environment: string;
  types: ReadonlySet<string> | undefined;
  push(event: StoredEvent): void;
}

const REPLAY_PAGE = 500;

interface StreamState {
  closed: boolean;
  wake: (() => void) | undefined;
}

/**
 * Live events for subscriptions on this instance. One tailer reads the events table by `seq` for
 * all subscribers (not one query per subscriber), woken by the relay's doorbell and by a poll, so
 * events stamped by any instance reach subscribers on every instance.
 */
export class EventFeed {
  private readonly subscribers = new Set<Subscriber>();
  private cursor: number | undefined;
  private polling: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly pollMs = 250,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Ring the doorbell: read new events now. */
  wake(): void {
    if (this.subscribers.size === 0) return;
    if (this.polling) {
      this.again = true;
      return;
    }
    this.polling = this.poll()
      .catch(this.onError)
      .finally(() => {
        this.polling = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
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
    const state: StreamState = { closed: false, wake: undefined };
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
        queue.push(event);
        state.wake?.();
      },
    };
    this.add(subscriber);
    try {
      let last = after ?? (await latestEventSeq(this.db));
      if (after !== undefined) {
        while (!state.closed) {
          const page = await eventStore.listEventsAfter(this.db, principal, last, REPLAY_PAGE, types);
          for (const event of page) {
            last = event.seq!;
            yield event;
          }
          if (page.length < REPLAY_PAGE) break;
        }
      }
      while (!state.closed) {
        while (queue.length > 0) {
          const event = queue.shift()!;
          if (event.seq! <= last) continue;
          last = event.seq!;
          yield event;
        }
        if (state.closed) break;
        await new Promise<void>((resolve) => (state.wake = resolve));
        state.wake = undefined;
      }
    } finally {
      this.remove(subscriber);
    }
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private add(subscriber: Subscriber): void {
    this.subscribers.add(subscriber);
    if (!this.timer) {
      this.timer = setInterval(() => this.wake(), this.pollMs);
      this.timer.unref();
    }
    this.wake();
  }

  private remove(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber);
    if (this.subscribers.size === 0) this.stop();
  }

  private async poll(): Promise<void> {
    this.cursor ??= await latestEventSeq(this.db);
    for (;;) {
      const rows = await this.db
        .select()
        .from(events)
        .where(gt(events.seq, this.cursor))
        .orderBy(asc(events.seq))
        .limit(1000);
      for (const row of rows) {
        this.cursor = row.seq!;
        const event = toStoredEvent(row);
        for (const subscriber of this.subscribers) {
          if (
            subscriber.userId === event.userId &&
            subscriber.environment === event.environment &&
            (!subscriber.types || subscriber.types.has(event.type))
          ) {
            subscriber.push(event);
          }
        }
      }
      if (rows.length < 1000) return;
    }
  }
}
