import { bigint, customType, timestamp } from 'drizzle-orm/pg-core';

/**
 * Column types whose values differ between drivers live here, so the rest of the code never sees
 * the difference: PGlite returns int8 as a JS number, node-postgres as a string, and both return
 * numeric and sum() as strings. Money never passes through a JS number.
 */

/** NGN amounts in kobo. Always a bigint in JS. */
export const kobo = (name: string) => bigint(name, { mode: 'bigint' });

/** Raw token base units (u64 and beyond): numeric(39,0) in the database, bigint in JS. */
export const tokenUnits = customType<{ data: bigint; driverData: string }>({
  dataType: () => 'numeric(39,0)',
  toDriver: (value) => value.toString(),
  fromDriver: (value) => toBigInt(value),
});

/** Transaction id of the inserting transaction; see the outbox relay. */
export const xid8 = customType<{ data: string; driverData: string }>({
  dataType: () => 'xid8',
  fromDriver: (value) => String(value),
});

export const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
export const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

/** Converts whatever a driver returned for an integer-valued column or aggregate into a bigint. */
export function toBigInt(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`Unsafe integer from database: ${value}`);
    return BigInt(value);
  }
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw new TypeError(`Not an integer value from database: ${JSON.stringify(value)}`);
}

/** Same, for counters known to fit in a JS number (row counts, sequence numbers). */
export function toSafeNumber(value: unknown): number {
  const big = toBigInt(value);
  if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`Counter beyond 2^53: ${big}`);
  return Number(big);
}

/** Binary data: bytea in the database, a Uint8Array in JS (node-postgres gives a Buffer, PGlite a Uint8Array). */
export const bytes = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  toDriver: (value) => Buffer.from(value.buffer, value.byteOffset, value.byteLength),
  fromDriver: (value) => new Uint8Array(value),
});
