/**
 * GraphQL operation names come from clients, so as metric labels they must be bounded, and no
 * caller may spend the bound for everyone else:
 * - an operation of a caller without a credential is `unauthenticated`, whatever its name: anyone
 *   on the internet can send names, so none of theirs becomes a label;
 * - an authenticated caller's well-formed name is its own label once known; each credential may
 *   make at most NAMES_PER_CREDENTIAL names known, and the process at most MAX_NAMES in all, so one
 *   key sending thousands of names only turns its own later new names into `other`. A name known
 *   already (from any credential) costs nothing;
 * - an authenticated operation without a name is `anonymous`, a malformed or reserved one `other`.
 * Known names are never forgotten: their series stay in the counter for the process's life anyway.
 */
export const NAMES_PER_CREDENTIAL = 50;
export const MAX_NAMES = 1000;
const WELL_FORMED = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Labels of their own: a client naming its operation one of these would blur them. */
const RESERVED = new Set(['unauthenticated', 'anonymous', 'other']);

const known = new Set<string>();
/** Credential id → how many names it made known. An entry exists only for a credential that made one, so at most MAX_NAMES. */
const introducedBy = new Map<string, number>();

/** Who sent the operation: its credential's id, or nothing when it carried no valid credential. */
export interface OperationCaller {
  credentialId: string;
}

export function operationLabel(name: string | null | undefined, caller: OperationCaller | null | undefined): string {
  if (!caller) return 'unauthenticated';
  if (!name) return 'anonymous';
  if (known.has(name)) return name;
  if (!WELL_FORMED.test(name) || RESERVED.has(name)) return 'other';
  const introduced = introducedBy.get(caller.credentialId) ?? 0;
  if (introduced >= NAMES_PER_CREDENTIAL || known.size >= MAX_NAMES) return 'other';
  introducedBy.set(caller.credentialId, introduced + 1);
  known.add(name);
  return name;
}
