import type { Database } from '../../db/client.js';
import { isUniqueViolation } from '../../db/sql-state.js';
import type { Clock } from '../clock.js';
import { badInput, DomainError, notFound } from '../errors.js';
import { type AdvanceWalk, walkClock } from './clock-advance.js';
import type { SandboxPrincipal } from './sandbox-principal.js';
import { type TestClockRow, testClockStore } from './test-clock-store.js';
import type { TestClocks } from './test-clocks.js';

/** The longest one advance may move a clock: a year, so a mistyped unit cannot walk a clock for ever. */
export const MAX_ADVANCE_SECONDS = 366 * 24 * 3600;
/** How long an advance holds its clock (a lease: a process that died mid-advance frees it after this). */
const ADVANCE_LEASE_MS = 5 * 60_000;
const MAX_NAME = 100;

/** A test clock as the API shows it. */
export interface TestClockView {
  id: string;
  name: string;
  /** The clock's time now. */
  now: Date;
  /** How far ahead of the wall clock it runs, in seconds. */
  offsetSeconds: number;
  /** Whether it drives its sandbox account's time. */
  attached: boolean;
  status: 'READY' | 'ADVANCING';
  createdAt: Date;
}

export interface TestClockAdvance extends AdvanceWalk {
  clock: TestClockView;
}

/**
 * Sandbox test clocks (docs/sandbox.md#test-clocks): created by a sandbox account, attached to it
 * so every time-driven step of the account reads the clock, and advanced. Every method takes a
 * `SandboxPrincipal`: a production caller cannot name a clock at all.
 */
export class TestClockService {
  constructor(
    private readonly db: Database,
    private readonly base: Clock,
    private readonly clocks: TestClocks,
  ) {}

  async create(principal: SandboxPrincipal, nameInput: unknown): Promise<TestClockView> {
    const name = nameOf(nameInput);
    return this.view(await testClockStore.insert(this.db, principal, name));
  }

  async list(principal: SandboxPrincipal): Promise<TestClockView[]> {
    return (await testClockStore.list(this.db, principal)).map((row) => this.view(row));
  }

  async get(principal: SandboxPrincipal, id: string): Promise<TestClockView> {
    return this.view(await this.owned(principal, id));
  }

  /**
   * Makes the clock drive the account's time. Jobs the account queued before keep their wall-clock
   * due times (they were read from the wall clock), but for webhook deliveries, which the clock's
   * advances always reach. Refused while another clock is attached.
   */
  async attach(principal: SandboxPrincipal, id: string): Promise<TestClockView> {
    const clock = await this.owned(principal, id);
    if (clock.attachedAt) return this.view(clock);
    const row = await testClockStore.setAttached(this.db, clock.id, this.base.now(), this.base.now()).catch((error) => {
      if (isUniqueViolation(error))
        throw new DomainError('CONFLICT', 'Another test clock is attached to this sandbox account: detach it first.');
      throw error;
    });
    if (!row) throw notFound('Test clock');
    this.clocks.changed(row);
    return this.view(row);
  }

  /** The account goes back to the wall clock; jobs the clock scheduled keep their wall-clock due times. */
  async detach(principal: SandboxPrincipal, id: string): Promise<TestClockView> {
    const clock = await this.owned(principal, id);
    const row = await testClockStore.setAttached(this.db, clock.id, null, this.base.now());
    if (!row) throw notFound('Test clock');
    this.clocks.changed(row);
    return this.view(row);
  }

  /** Detaches and deletes the clock. */
  async delete(principal: SandboxPrincipal, id: string): Promise<TestClockView> {
    const clock = await this.owned(principal, id);
    await testClockStore.delete(this.db, clock.id);
    this.clocks.deleted(clock.id);
    return { ...this.view(clock), attached: false };
  }

  /**
   * Moves the clock forward by `seconds` and returns once the account's work that fell due on the
   * way has run, each job at its own time on the clock (clock-advance.ts). Needs a running job
   * runner (an instance with WORKERS=true). One advance of a clock at a time.
   */
  async advance(principal: SandboxPrincipal, id: string, secondsInput: unknown): Promise<TestClockAdvance> {
    const seconds = secondsOf(secondsInput);
    const clock = await this.owned(principal, id);
    if (!clock.attachedAt)
      throw new DomainError('CONFLICT', 'Attach the test clock to the sandbox account before advancing it.', {
        field: 'id',
      });
    const now = this.base.now();
    const claimed = await testClockStore.claimAdvance(
      this.db,
      clock.id,
      now,
      new Date(now.getTime() + ADVANCE_LEASE_MS),
    );
    if (!claimed)
      throw new DomainError('CONFLICT', 'The test clock is already advancing: retry when that advance returns.');
    this.clocks.changed(claimed);
    try {
      const { walk } = await walkClock(this.db, this.base, claimed, seconds * 1000, (row) => this.clocks.changed(row));
      return { clock: this.view(await this.release(clock.id)), ...walk };
    } catch (error) {
      await this.release(clock.id).catch(() => undefined);
      throw error;
    }
  }

  /** Gives the advance's lease back; the clock as it stands. */
  private async release(id: string): Promise<TestClockRow> {
    const released = await testClockStore.releaseAdvance(this.db, id, this.base.now());
    if (!released) throw notFound('Test clock');
    this.clocks.changed(released);
    return released;
  }

  private async owned(principal: SandboxPrincipal, id: string): Promise<TestClockRow> {
    if (!UUID.test(id)) throw notFound('Test clock');
    const row = await testClockStore.find(this.db, principal, id);
    if (!row) throw notFound('Test clock');
    return row;
  }

  private view(row: TestClockRow): TestClockView {
    const now = this.base.now();
    return {
      id: row.id,
      name: row.name,
      now: new Date(now.getTime() + row.offsetMs),
      offsetSeconds: Math.floor(row.offsetMs / 1000),
      attached: row.attachedAt !== null,
      status: row.advancingUntil && row.advancingUntil > now ? 'ADVANCING' : 'READY',
      createdAt: row.createdAt,
    };
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function nameOf(input: unknown): string {
  if (input === undefined || input === null) return 'Test clock';
  if (typeof input !== 'string' || input.trim() === '' || input.trim().length > MAX_NAME)
    throw badInput('name', `name must be 1 to ${MAX_NAME} characters.`);
  return input.trim();
}

function secondsOf(input: unknown): number {
  if (typeof input !== 'number' || !Number.isInteger(input) || input < 1 || input > MAX_ADVANCE_SECONDS)
    throw badInput('seconds', `seconds must be a whole number from 1 to ${MAX_ADVANCE_SECONDS} (a year).`);
  return input;
}
