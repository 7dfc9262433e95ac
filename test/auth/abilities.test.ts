import { describe, expect, it } from 'vitest';
import { abilitiesOf, parsePermissionLevel } from '../../src/domain/auth/permissions.js';
import type { GraphQLContext } from '../../src/graphql/context.js';
import { requireAbility } from '../../src/graphql/directives/auth.js';

const contextWith = (level: Parameters<typeof abilitiesOf>[0]) =>
  ({
    principal: {
      kind: 'api_key',
      credentialId: 'k',
      userId: 'u',
      environment: 'sandbox',
      abilities: abilitiesOf(level),
    },
    credentialRejected: false,
  }) as unknown as GraphQLContext;

describe('permission levels grant abilities as DESIGN §4 says', () => {
  it.each([
    ['READ_ONLY', { READ: true, TRANSACT: false, MANAGE: false }],
    ['TRANSACTIONS', { READ: true, TRANSACT: true, MANAGE: false }],
    ['ACCOUNT_MANAGEMENT', { READ: true, TRANSACT: false, MANAGE: true }],
    ['FULL_ACCESS', { READ: true, TRANSACT: true, MANAGE: true }],
  ] as const)('%s', (level, expected) => {
    for (const [ability, ok] of Object.entries(expected)) {
      const check = () => requireAbility(contextWith(level), ability as 'READ');
      if (ok) expect(check).not.toThrow();
      else expect(check).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
    }
  });

  it('reads the seed spellings of a level', () => {
    expect(parsePermissionLevel('Read Only')).toBe('READ_ONLY');
    expect(parsePermissionLevel('full-access')).toBe('FULL_ACCESS');
    expect(parsePermissionLevel('Account Management')).toBe('ACCOUNT_MANAGEMENT');
    expect(parsePermissionLevel('admin')).toBeUndefined();
  });

  it('tells a missing credential from a rejected one', () => {
    const none = { principal: null, credentialRejected: false } as unknown as GraphQLContext;
    const rejected = { principal: null, credentialRejected: true } as unknown as GraphQLContext;
    expect(() => requireAbility(none, 'READ')).toThrow(/X-API-KEY/);
    expect(() => requireAbility(rejected, 'READ')).toThrow(/invalid, expired or revoked/);
  });
});
