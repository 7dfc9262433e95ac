/** Time as the domain sees it. Injected everywhere so tests can walk schedules in milliseconds. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** The account whose time an operation runs on. */
export interface ClockOwner {
  userId: string;
  environment: string;
}

/**
 * The clock of an account: every money operation asks for it by account, so a sandbox account with
 * a test clock attached runs on that clock (sandbox/test-clocks.ts) and every other account on the
 * process clock.
 */
export type ClockFor = (account: ClockOwner) => Clock;

/**
 * A sandbox account's test clock as read at one moment: the process clock plus the offset its
 * advances have added. The offset is fixed for the object's life (an advance makes a new one), so a
 * due time read from it converts back to wall time exactly (`wallTimeOf`): jobs are stored and
 * claimed in wall time whatever clock their due time was read from.
 */
export class TestClockTime implements Clock {
  constructor(
    private readonly base: Clock,
    readonly testClockId: string,
    readonly offsetMs: number,
  ) {}
  now(): Date {
    return new Date(this.base.now().getTime() + this.offsetMs);
  }
}

/** The wall time of a moment read from `clock` (itself for any clock but a test clock). */
export const wallTimeOf = (clock: Clock | undefined, at: Date): Date =>
  clock instanceof TestClockTime ? new Date(at.getTime() - clock.offsetMs) : at;

/** A wall-clock moment (a provider's, read on the process clock) as `clock` reads it: the inverse of `wallTimeOf`. */
export const accountTimeOf = (clock: Clock | undefined, wall: Date): Date =>
  clock instanceof TestClockTime ? new Date(wall.getTime() + clock.offsetMs) : wall;

/**
 * A job's due time and clock for a one-statement write (plain SQL): `$runAt` is read on the
 * account's clock, `$clockId` and `$offsetMs` name its test clock (null and 0 for any other). See
 * `clockedRunAt` in jobs/job-runner.ts: the offset is the clock row's, read under a share lock.
 */
export const clockParams = (clock: Clock | undefined): [string | null, number] =>
  clock instanceof TestClockTime ? [clock.testClockId, clock.offsetMs] : [null, 0];

/** A service's clock lookup from what it was built with: one clock for every account, or a lookup. */
export const clockLookup = (clock: Clock | ClockFor): ClockFor => (typeof clock === 'function' ? clock : () => clock);

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(to: Date): void {
    this.current = to.getTime();
  }
}
