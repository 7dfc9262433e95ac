/**
 * The seed's four key permission levels, and the three abilities they grant. A field of the
 * graph needs one ability; a credential has the abilities of its level (or of its OAuth scopes).
 *
 *   READ_ONLY           read
 *   TRANSACTIONS        read + transact   (move money)
 *   ACCOUNT_MANAGEMENT  read + manage     (keys, webhooks, payment methods, customers)
 *   FULL_ACCESS         read + transact + manage
 */
export const PERMISSION_LEVELS = ['READ_ONLY', 'TRANSACTIONS', 'ACCOUNT_MANAGEMENT', 'FULL_ACCESS'] as const;
export type PermissionLevel = (typeof PERMISSION_LEVELS)[number];

export const ABILITIES = ['READ', 'TRANSACT', 'MANAGE'] as const;
export type Ability = (typeof ABILITIES)[number];

const GRANTS: Record<PermissionLevel, readonly Ability[]> = {
  READ_ONLY: ['READ'],
  TRANSACTIONS: ['READ', 'TRANSACT'],
  ACCOUNT_MANAGEMENT: ['READ', 'MANAGE'],
  FULL_ACCESS: ['READ', 'TRANSACT', 'MANAGE'],
};

export function abilitiesOf(level: PermissionLevel): ReadonlySet<Ability> {
  return new Set(GRANTS[level]);
}

/** The seed's names for the levels, as people read them. */
export const LEVEL_LABELS: Record<PermissionLevel, string> = {
  READ_ONLY: 'Read Only',
  TRANSACTIONS: 'Transactions',
  ACCOUNT_MANAGEMENT: 'Account Management',
  FULL_ACCESS: 'Full Access',
};

/** The levels that grant an ability, for error messages and docs. */
export function levelsGranting(ability: Ability): PermissionLevel[] {
  return PERMISSION_LEVELS.filter((level) => GRANTS[level].includes(ability));
}

/** Accepts the spelling of the seed ("Read Only", "Full Access") and the constant form. */
export function parsePermissionLevel(input: string): PermissionLevel | undefined {
  const normalised = input
    .trim()
    .toUpperCase()
    .replace(/[\s-]+/g, '_');
  return (PERMISSION_LEVELS as readonly string[]).includes(normalised) ? (normalised as PermissionLevel) : undefined;
}

export const ENVIRONMENTS = ['sandbox', 'production'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];
