import type { Ability } from '../auth/permissions.js';

/**
 * OAuth scopes, one per ability of the permission levels. Every scope includes reading, so a
 * token's abilities equal those of a key level: `read` = Read Only, `transact` = Transactions,
 * `manage` = Account Management, `transact manage` = Full Access.
 */
export const SCOPES = {
  read: { abilities: ['READ'], description: 'See your account, balances, transactions and records' },
  transact: {
    abilities: ['READ', 'TRANSACT'],
    description: 'Move money for you: deposits, payouts, transfers, bills, swaps and offramp orders',
  },
  manage: {
    abilities: ['READ', 'MANAGE'],
    description: 'Change your settings: API keys, webhooks, payment methods and business customers',
  },
} as const satisfies Record<string, { abilities: readonly Ability[]; description: string }>;

export type Scope = keyof typeof SCOPES;
export const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];

export const isScope = (value: string): value is Scope => Object.hasOwn(SCOPES, value);

export function abilitiesOfScopes(scopes: readonly string[]): ReadonlySet<Ability> {
  return new Set(scopes.filter(isScope).flatMap((s) => SCOPES[s].abilities));
}

/** Splits a space-delimited scope parameter (RFC 6749 §3.3), dropping repeats. */
export function parseScopeParameter(value: string | undefined): string[] {
  return [...new Set((value ?? '').split(' ').filter(Boolean))];
}

const NARROWEST: Record<Ability, Scope> = { READ: 'read', TRANSACT: 'transact', MANAGE: 'manage' };

/** The narrowest scope that grants an ability: what the OpenAPI document lists per route. */
export const scopeGranting = (ability: Ability): Scope => NARROWEST[ability];
