/**
 * GraphQL operation names come from clients, so as metric labels they must be capped: a name is
 * used as sent while it is well formed and among the first MAX_NAMES seen by this process; any
 * other is "other", and an operation without a name is "anonymous".
 */
const MAX_NAMES = 200;
const WELL_FORMED = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const seen = new Set<string>();

export function operationLabel(name: string | null | undefined): string {
  if (!name) return 'anonymous';
  if (!WELL_FORMED.test(name)) return 'other';
  if (seen.has(name)) return name;
  if (seen.size >= MAX_NAMES) return 'other';
  seen.add(name);
  return name;
}
