import type { Redis } from 'ioredis';
import { closeRedis } from '../redis-close.js';
import { outsideTraces } from '../../observability/tracing.js';

const CHANNEL = 'pgw:events:stamped';

/**
 * Tells event readers on every instance that new events were stamped. Only a wake-up: readers
 * always read the events table itself, so a lost ring delays an event by one poll, never loses it.
 * While Redis is unreachable, rings stay local and other instances' readers fall back to polling.
 */
export class Doorbell {
  private readonly listeners = new Set<() => void>();
  private publisher: Redis | undefined;
  private subscriber: Redis | undefined;

  /** While ioredis loads: it loads only when there is a Redis to ring through. */
  private readonly connecting: Promise<void> | undefined;
  private closed = false;

  /** `watch` is given each Redis connection (for its state: readiness, one log line per outage). */
  constructor(redisUrl?: string, watch: (client: Redis, name: string) => void = () => undefined) {
    if (!redisUrl) return;
    // Until the clients exist, rings are delivered here only (as while Redis is away).
    this.connecting = import('ioredis')
      .then(({ Redis }) => {
        if (this.closed) return;
        // No offline queue: while Redis is away a ring fails at once and is delivered locally instead.
        const publisher = new Redis(redisUrl, {
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
          lazyConnect: true,
        });
        // ioredis subscribes again by itself after a reconnect.
        const subscriber = new Redis(redisUrl, { lazyConnect: true });
        for (const client of [publisher, subscriber]) client.on('error', () => undefined);
        watch(publisher, 'event doorbell (publish)');
        watch(subscriber, 'event doorbell (subscribe)');
        subscriber.on('message', () => this.notifyLocal());
        this.publisher = publisher;
        this.subscriber = subscriber;
        void subscriber
          .connect()
          .then(() => subscriber.subscribe(CHANNEL))
          .catch(() => undefined);
        void publisher.connect().catch(() => undefined);
      })
      // Not loaded (or not made): rings stay in this process, as while Redis is away.
      .catch(() => undefined);
  }

  onRing(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  ring(): void {
    // Our own subscriber hears the ring through Redis; while it is disconnected, ring here directly.
    const heardThroughRedis = this.subscriber?.status === 'ready';
    if (!heardThroughRedis) this.notifyLocal();
    this.publisher?.publish(CHANNEL, '1').catch(() => {
      if (heardThroughRedis) this.notifyLocal();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting;
    await Promise.all([closeRedis(this.publisher), closeRedis(this.subscriber)]);
  }

  /** Listeners wake background work (claims, feed reads): in no trace, whoever rang. */
  private notifyLocal(): void {
    outsideTraces(() => {
      for (const listener of this.listeners) listener();
    });
  }
}
