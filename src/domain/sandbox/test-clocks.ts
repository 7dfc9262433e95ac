import type { Database } from '../../db/client.js';
import { isEmbeddedDatabase } from '../../db/embedded.js';
import { type Clock, type ClockFor, type ClockOwner, TestClockTime } from '../clock.js';
import { isSandboxAccount } from './sandbox-principal.js';
import { testClockStore } from './test-clock-store.js';

/** How often a serving process reads the attached clocks again (advances made by other instances). */
export const TEST_CLOCKS_REFRESH_MS = 2_000;

/**
 * How often while the wake channel listens: every instance that changes a clock announces it there
 * (workers.ts), and the listener reads the clocks again when told, so the round only backs it up.
 */
export const TEST_CLOCKS_LISTENING_REFRESH_MS = 30_000;

/**
 * Which sandbox accounts run on a test clock, in memory, so asking an account's time costs no
 * query: `clockFor` answers every production account and every sandbox account without a clock
 * with the process clock after one comparison. The map is written by this process's own clock
 * changes at once, read again from `test_clocks` every `TEST_CLOCKS_REFRESH_MS` while started (the
 * changes other instances made; never on the embedded database, which no other instance opens),
 * and for one clock before the runner runs a job of it, so a job always runs on its clock's latest
 * time.
 */
export class TestClocks {
  /** Attached clocks by their account's user id; only sandbox accounts are ever looked up. */
  private byAccount = new Map<string, TestClockTime>();
  /** Bumped by each local change: a load that began before one does not overwrite it. */
  private generation = 0;
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  /** Whether the wake channel listens now (set by the workers): the rounds then come further apart. */
  private listeningNow: () => boolean = () => false;
  private readonly changeListeners = new Set<() => void>();

  constructor(
    private readonly db: Database,
    private readonly base: Clock,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** The clock of an account: its test clock when one is attached to it, else the process clock. */
  readonly clockFor: ClockFor = (account: ClockOwner): Clock => {
    if (this.byAccount.size === 0 || !isSandboxAccount(account)) return this.base;
    return this.byAccount.get(account.userId) ?? this.base;
  };

  /**
   * Loads the attached clocks, then keeps reading them every `everyMs` on PostgreSQL, where other
   * instances change them too. Resolves after the first load. On the embedded database every
   * change is this process's own, already in the map: reading it again every 2 s was a fifth of an
   * idle instance's CPU there (docs/benchmarks.md, an idle instance).
   */
  async start(everyMs = TEST_CLOCKS_REFRESH_MS, listeningEveryMs = TEST_CLOCKS_LISTENING_REFRESH_MS): Promise<void> {
    await this.load();
    if (isEmbeddedDatabase(this.db) || this.started) return;
    this.started = true;
    const round = () => {
      this.timer = setTimeout(
        () => void this.load().finally(() => this.started && round()),
        this.refreshMs(everyMs, listeningEveryMs),
      );
      this.timer.unref();
    };
    round();
  }

  private refreshMs(everyMs: number, listeningEveryMs: number): number {
    return this.listening() ? Math.max(everyMs, listeningEveryMs) : everyMs;
  }

  stop(): void {
    this.started = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Rounds come TEST_CLOCKS_LISTENING_REFRESH_MS apart while `listening` says the wake channel listens. */
  listenWith(listening: () => boolean): void {
    this.listeningNow = listening;
  }

  /** Whether the wake channel that tells this process of other instances' changes listens now. */
  listening(): boolean {
    return this.listeningNow();
  }

  /** Told of each change this process makes to a clock (the wake channel tells the other instances). */
  onLocalChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** This process changed a clock (attached, detached, advanced): its accounts' time follows at once. */
  changed(row: { id: string; userId: string; offsetMs: number; attachedAt: Date | null }): void {
    this.use(row);
    for (const listener of this.changeListeners) listener();
  }

  /** This process deleted a clock. */
  deleted(clockId: string): void {
    this.forget(clockId);
    for (const listener of this.changeListeners) listener();
  }

  /** Reads every attached clock again. A failure keeps what was known (the next round tries again). */
  async load(): Promise<void> {
    const started = this.generation;
    try {
      const rows = await testClockStore.attached(this.db);
      if (this.generation !== started) return;
      this.byAccount = new Map(rows.map((row) => [row.userId, new TestClockTime(this.base, row.id, row.offsetMs)]));
    } catch (error) {
      this.onError(error);
    }
  }

  /** Reads one clock again (before a job of it runs): its latest offset, or gone when detached or deleted. */
  async reload(clockId: string): Promise<void> {
    const row = await testClockStore.byId(this.db, clockId);
    if (row) this.use(row);
    else this.forget(clockId);
  }

  /** A clock as read, or as this process changed it: its accounts' time follows at once. */
  use(row: { id: string; userId: string; offsetMs: number; attachedAt: Date | null }): void {
    this.generation++;
    this.forget(row.id);
    if (row.attachedAt) this.byAccount.set(row.userId, new TestClockTime(this.base, row.id, row.offsetMs));
  }

  forget(clockId: string): void {
    this.generation++;
    for (const [userId, clock] of this.byAccount) if (clock.testClockId === clockId) this.byAccount.delete(userId);
  }
}
