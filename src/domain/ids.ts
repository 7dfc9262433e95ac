const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Record ids are UUIDs. Anything else cannot name a record, so lookups answer "not found" without a
 * query (and PostgreSQL never sees a malformed uuid, which it would reject with an error).
 */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
