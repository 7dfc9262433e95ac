/** Whether an error (or one it wraps) is PostgreSQL's unique_violation (23505), on either driver. */
export function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: string }).code === '23505') return true;
  }
  return false;
}
