import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationTransitions } from '../../src/db/lifecycle-schema.js';
import { events } from '../../src/db/schema.js';
import { ManualClock } from '../../src/domain/clock.js';
import { LIFECYCLES } from '../../src/domain/state-tables.js';
import { TRANSACTION } from '../../src/domain/wallet/transaction-lifecycle.js';
import { IllegalTransition, isLegal, transition } from '../../src/domain/lifecycle/transition.js';
import { OFFRAMP_STATUSES } from '../../src/domain/offramp/catalogue.js';
import { EVENT_KINDS } from '../../src/domain/webhooks/event-kinds.js';
import { openPendingTransaction } from '../../src/domain/wallet/wallet-events.js';
import { createTestApp, seedTenant, type TestApp } from '../helpers/app.js';

describe('state-transition tables', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(() => t.close());

  it('lists, for every kind, only moves out of open states, each emitting known event kinds', () => {
    for (const lifecycle of LIFECYCLES) {
      const moves = lifecycle.moves as Record<string, Record<string, readonly string[]>>;
      for (const [from, targets] of Object.entries(moves)) {
        for (const [to, kinds] of Object.entries(targets)) {
          // Every target is one of the kind's own statuses.
          expect(Object.keys(moves), `${lifecycle.kind} ${from}→${to}`).toContain(to);
          for (const kind of kinds) expect(EVENT_KINDS as readonly string[]).toContain(kind);
        }
      }
    }
    expect(isLegal(TRANSACTION, 'PENDING', 'COMPLETED')).toBe(true);
    expect(isLegal(TRANSACTION, 'COMPLETED', 'FAILED')).toBe(false);
    expect(isLegal(TRANSACTION, 'FAILED', 'PENDING')).toBe(false);
    const offramp = LIFECYCLES.find((l) => l.kind === 'offramp_order')!;
    const moves = offramp.moves as Record<string, Record<string, unknown>>;
    expect(Object.keys(moves).sort()).toEqual([...OFFRAMP_STATUSES].sort());
    expect(moves['initiated']!['expired']).toBeDefined();
    expect(moves['deposit_received']!['expired']).toBeUndefined();
    expect(moves['completed']).toEqual({});
  });

  it('moves once under a race, keeps the move in the history with its event, and refuses an unlisted move', async () => {
    const { user } = await seedTenant(t.services);
    const now = clock.now();
    const pending = await t.services.db.transaction((tx) =>
      openPendingTransaction(
        tx,
        { userId: user.id, environment: 'sandbox' },
        {
          type: 'DEPOSIT',
          amount: 1_000n,
          reference: `LC-${crypto.randomUUID()}`,
          description: null,
          counterparty: {},
        },
        now,
      ),
    );
    const racing = await Promise.all(
      (['COMPLETED', 'FAILED', 'COMPLETED'] as const).map((to) =>
        t.services.db.transaction((tx) => transition(tx, TRANSACTION, pending.id, 'PENDING', to, now)),
      ),
    );
    const winners = racing.filter((row) => row !== undefined);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.version).toBe(pending.version + 1);
    const history = await t.services.db
      .select()
      .from(operationTransitions)
      .where(and(eq(operationTransitions.kind, 'transaction'), eq(operationTransitions.operationId, pending.id)));
    expect(history.map((h) => [h.fromStatus, h.toStatus])).toEqual([['PENDING', winners[0]!.status]]);
    const settledEvents = await t.services.db
      .select()
      .from(events)
      .where(and(eq(events.userId, user.id), eq(events.type, `transaction.${winners[0]!.status.toLowerCase()}`)));
    expect(settledEvents).toHaveLength(1);
    expect(settledEvents[0]!.data).toMatchObject({ id: pending.id, status: winners[0]!.status });
    // Out of a final state: refused before anything is written.
    await expect(
      t.services.db.transaction((tx) => transition(tx, TRANSACTION, pending.id, winners[0]!.status, 'PENDING', now)),
    ).rejects.toBeInstanceOf(IllegalTransition);
  });
});
