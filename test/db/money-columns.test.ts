import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { pgTable, text } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, type Database } from '../../src/db/client.js';
import { kobo, toBigInt, tokenUnits } from '../../src/db/columns.js';
import { testDatabase } from '../helpers/database.js';

/** The money column types survive a round trip on both drivers without passing through a JS number. */
describe('money columns', () => {
  const tableName = `money_probe_${randomUUID().replace(/-/g, '')}`;
  const probe = pgTable(tableName, {
    id: text('id').primaryKey(),
    balance: kobo('balance').notNull(),
    units: tokenUnits('units').notNull(),
  });
  let db: Database;
  beforeAll(async () => {
    db = (await testDatabase()).db;
    await db.execute(
      sql.raw(`create table ${tableName} (id text primary key, balance bigint not null, units numeric(39,0) not null)`),
    );
  });
  afterAll(() => db.execute(sql.raw(`drop table ${tableName}`)));

  it('keeps kobo beyond 2^53 and u64-plus token units exact', async () => {
    const balance = 9_007_199_254_740_993n; // 2^53 + 1: a JS number would round it
    const units = 340_282_366_920_938_463_463_374_607_431_768_211_455n; // u128 max
    await db.insert(probe).values({ id: 'a', balance, units });
    const [row] = await db.select().from(probe);
    expect(row).toEqual({ id: 'a', balance, units });
    const [sum] = await queryRows<{ total: unknown }>(db, sql.raw(`select sum(balance) as total from ${tableName}`));
    expect(toBigInt(sum!.total)).toBe(balance);
  });
});
