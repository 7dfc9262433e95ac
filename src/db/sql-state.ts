/**
 * Whether an error (or one it wraps: Drizzle puts the driver's error in `cause`) carries the
 * PostgreSQL SQLSTATE `state`, on either driver.
 */
export function hasSqlState(error: unknown, state: string): boolean {
  // At most a few causes deep, as databaseFaultOf (faults.ts): a cause that loops must not hang.
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++, e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === state) return true;
  }
  return false;
}

/** PostgreSQL's unique_violation (23505). */
export const isUniqueViolation = (error: unknown): boolean => hasSqlState(error, '23505');

/** PostgreSQL's lock_not_available (55P03): a lock_timeout ran out. */
export const isLockTimeout = (error: unknown): boolean => hasSqlState(error, '55P03');
