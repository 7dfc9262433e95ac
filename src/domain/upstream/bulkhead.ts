import { DomainError } from '../errors.js';

/** How many calls to one provider may be in flight at once in this process, and how long one waits for room. */
export interface BulkheadSettings {
  /** Calls in flight at once. */
  limit: number;
  /** How long a call waits for a free place before it is refused with BUSY; 0 refuses at once. */
  maxWaitMs: number;
}

/** What a bulkhead holds now and has refused so far (the provider metrics read it at each scrape). */
export interface BulkheadStats {
  provider: string;
  limit: number;
  inFlight: number;
  waiting: number;
  /** Calls refused with BUSY since the process started. */
  rejected: number;
}

/** Seconds a refused caller is told to wait: a place frees as soon as one call in flight returns. */
const RETRY_AFTER_SECONDS = 1;

/** A call refused for want of room: nothing was sent to the provider and nothing was recorded. */
export const providerBusy = (provider: string, limit: number) =>
  new DomainError(
    'BUSY',
    `The gateway is already making ${limit} calls to the ${provider} provider, as many as it allows at once; nothing was done. Retry in ${RETRY_AFTER_SECONDS} s.`,
    { retryAfter: RETRY_AFTER_SECONDS },
  );

/**
 * A bulkhead per provider: at most `limit` calls in flight, so a slow provider holds a bounded part
 * of this process (and the provider is never sent more than that at once), and beyond it a call
 * waits at most `maxWaitMs` for a place (first come, first served), then is refused with 503 BUSY
 * and Retry-After. It holds no database resource: an operation takes its place before its first
 * commit and gives it back when the provider has answered, so a refusal has written nothing.
 * The waiting line is as long as `limit` at most, so a burst far past it is refused at once.
 */
export class Bulkhead {
  private inFlight = 0;
  private rejected = 0;
  private readonly queue: Array<{ admit: () => void }> = [];

  constructor(
    readonly provider: string,
    readonly settings: BulkheadSettings,
  ) {}

  /** Runs `call` in a place of this bulkhead, waiting for one briefly; BUSY when none comes free. */
  async run<T>(call: () => Promise<T>): Promise<T> {
    const leave = await this.enter();
    try {
      return await call();
    } finally {
      leave();
    }
  }

  /**
   * Takes a place, waiting for one briefly; BUSY when none comes free. Answers the function that
   * gives it back (once, however often it is called), for a place held across steps `run` cannot
   * wrap in one call.
   */
  async enter(): Promise<() => void> {
    await this.admitted();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.leave();
    };
  }

  stats(): BulkheadStats {
    return {
      provider: this.provider,
      limit: this.settings.limit,
      inFlight: this.inFlight,
      waiting: this.queue.length,
      rejected: this.rejected,
    };
  }

  private admitted(): Promise<void> {
    const { limit, maxWaitMs } = this.settings;
    if (this.inFlight < limit && this.queue.length === 0) {
      this.inFlight++;
      return Promise.resolve();
    }
    if (maxWaitMs <= 0 || this.queue.length >= limit) return Promise.reject(this.refuse());
    return new Promise((resolve, reject) => {
      const waiter = {
        admit: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        const at = this.queue.indexOf(waiter);
        if (at === -1) return;
        this.queue.splice(at, 1);
        reject(this.refuse());
      }, maxWaitMs);
      this.queue.push(waiter);
    });
  }

  /** A place given back passes straight to the first waiter, so a new caller cannot overtake the line. */
  private leave(): void {
    const next = this.queue.shift();
    if (next) next.admit();
    else this.inFlight--;
  }

  private refuse(): DomainError {
    this.rejected++;
    return providerBusy(this.provider, this.settings.limit);
  }
}

/**
 * The bulkheads of a process, one per provider name (`sandbox`, `flutterwave`, …), made on first
 * use with that provider's settings.
 */
export class Bulkheads {
  private readonly byProvider = new Map<string, Bulkhead>();

  constructor(private readonly settingsOf: (provider: string) => BulkheadSettings) {}

  of(provider: string): Bulkhead {
    let bulkhead = this.byProvider.get(provider);
    if (!bulkhead) this.byProvider.set(provider, (bulkhead = new Bulkhead(provider, this.settingsOf(provider))));
    return bulkhead;
  }

  stats(): BulkheadStats[] {
    return [...this.byProvider.values()].map((b) => b.stats());
  }
}

/** Bulkheads without a limit: for a service built without the process's (a tool that builds it alone). */
export const UNBOUNDED_BULKHEADS = new Bulkheads(() => ({ limit: Number.POSITIVE_INFINITY, maxWaitMs: 0 }));
