import { describe, expect, it } from 'vitest';
import type { TransactionEventData } from '../../src/domain/events/payloads.js';
import { moneyEvent } from '../../src/domain/money-event.js';

const owner = { userId: '00000000-0000-4000-8000-000000000001', environment: 'sandbox' as const };
const transaction: TransactionEventData = {
  id: '00000000-0000-4000-8000-000000000002',
  reference: 'ref-1',
  type: 'DEPOSIT',
  status: 'PENDING',
  amount: 12.5,
  currency: 'NGN',
  version: 1,
  updatedAt: '2031-01-01T00:00:00.000Z',
};

describe('money events are built against the kind → data map', () => {
  it('records the kind, the owner and the data as given', () => {
    expect(moneyEvent('transaction.created', { ...owner, extra: 'not kept' } as typeof owner, transaction)).toEqual({
      type: 'transaction.created',
      ...owner,
      data: transaction,
    });
  });

  it('refuses, at compile time, data of another kind, a missing field and a kind outside the map', () => {
    // `npm run typecheck` fails if any of these compiles: each line must be an error.
    const typeErrors = () => [
      // @ts-expect-error a transaction's data is not a payout's
      moneyEvent('payout.completed', owner, transaction),
      // @ts-expect-error `version` is part of every transaction event
      moneyEvent('transaction.completed', owner, { ...transaction, version: undefined }),
      // @ts-expect-error a kind the map does not know
      moneyEvent('transaction.exploded', owner, transaction),
    ];
    expect(typeof typeErrors).toBe('function');
  });
});
