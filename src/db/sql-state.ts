/**
 * Whether an error (or one it wraps: Drizzle puts the driver's error in `cause`) carries the
 * PostgreSQL SQLSTATE `state`, on either driver.
 */
export function hasSqlState(error: unknown, state: string): boolean {
  for (const e of causesOf(error)) if ((e as { code?: unknown }).code === state) return true;
  return false;
}

/**
 * An error and the errors it wraps (`cause`: Drizzle wraps the driver's), at most five deep, so a
 * cause that loops cannot hang whoever walks it. Stops at the first that is not an object.
 */
export function* causesOf(error: unknown): Generator<object> {
  let current = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

/** PostgreSQL's unique_violation (23505). */
export const isUniqueViolation = (error: unknown): boolean => hasSqlState(error, '23505');

/** PostgreSQL's lock_not_available (55P03): a lock_timeout ran out. */
export const isLockTimeout = (error: unknown): boolean => hasSqlState(error, '55P03');
