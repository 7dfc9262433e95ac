import { getTableConfig } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { billRecords } from '../../src/db/bills-schema.js';
import { deposits, walletTransactions } from '../../src/db/wallet-schema.js';
import { idempotencyKeys } from '../../src/db/ledger-schema.js';
import { BILL_REFERENCE_CONSTRAINT } from '../../src/domain/bills/bill-writes.js';
import { KEY_CONSTRAINT, REFERENCE_CONSTRAINT } from '../../src/domain/money/plain-write.js';
import { DEPOSIT_REFERENCE_CONSTRAINT } from '../../src/domain/wallet/deposit-writes.js';

/**
 * The services tell a replayable key race, a taken reference and a fault apart by the name of the
 * unique index a statement violated. A renamed index would silently turn a 409 into a 500 (or a
 * fault into a 409): each name must be a unique index of its table.
 */
describe('the unique constraints the money paths answer by name', () => {
  const uniqueIndexes = (table: Parameters<typeof getTableConfig>[0]) =>
    getTableConfig(table)
      .indexes.filter((index) => index.config.unique)
      .map((index) => index.config.name);

  it('names unique indexes of the tables they guard', () => {
    expect(uniqueIndexes(idempotencyKeys)).toContain(KEY_CONSTRAINT);
    expect(uniqueIndexes(walletTransactions)).toContain(REFERENCE_CONSTRAINT);
    expect(uniqueIndexes(billRecords)).toContain(BILL_REFERENCE_CONSTRAINT);
    expect(uniqueIndexes(deposits)).toContain(DEPOSIT_REFERENCE_CONSTRAINT);
  });
});
