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
 * The clock of an account: every money operation asks for it by account, so a sandbox account can
 * later get a test clock of its own (advanced by the partner) without another rewrite. Today every
 * account shares the process clock.
 */
export type ClockFor = (account: ClockOwner) => Clock;

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
