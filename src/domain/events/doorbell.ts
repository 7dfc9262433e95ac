import { Redis } from 'ioredis';

const CHANNEL = 'pgw:events:stamped';

/**
 * Tells event readers on every instance that new events were stamped. Only a wake-up: readers
 * always read the events table itself, so a lost ring delays an event by one poll, never loses it.
 */
export class Doorbell {
  private readonly listeners = new Set<() => void>();
  private publisher: Redis | undefined;
  private subscriber: Redis | undefined;

  constructor(redisUrl?: string, onError: (error: unknown) => void = () => undefined) {
    if (!redisUrl) return;
    this.publisher = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
    this.subscriber = new Redis(redisUrl, { lazyConnect: true });
    for (const client of [this.publisher, this.subscriber]) client.on('error', onError);
    this.subscriber.on('message', () => this.notifyLocal());
    void this.subscriber
      .connect()
      .then(() => this.subscriber?.subscribe(CHANNEL))
      .catch(onError);
    void this.publisher.connect().catch(onError);
  }

  onRing(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  ring(): void {
    if (this.publisher) this.publisher.publish(CHANNEL, '1').catch(() => this.notifyLocal());
    else this.notifyLocal();
  }

  async close(): Promise<void> {
    await Promise.all([this.publisher?.quit().catch(() => undefined), this.subscriber?.quit().catch(() => undefined)]);
  }

  private notifyLocal(): void {
    for (const listener of this.listeners) listener();
  }
}
