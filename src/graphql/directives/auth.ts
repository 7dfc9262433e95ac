import { defaultFieldResolver, type GraphQLField, type GraphQLSchema, Kind } from 'graphql';
import { type Ability, levelsGranting } from '../../domain/auth/permissions.js';
import type { Principal } from '../../domain/auth/principal.js';
import { DomainError } from '../../domain/errors.js';
import type { GraphQLContext } from '../context.js';

/** Root fields the federation library adds; `_entities` checks each entity in its reference resolver. */
const FEDERATION_FIELDS = new Set(['_service', '_entities']);

export type AccessRule = { public: true } | { public: false; ability: Ability };

const LEVEL_NAMES = { READ_ONLY: 'Read Only', TRANSACTIONS: 'Transactions', ACCOUNT_MANAGEMENT: 'Account Management', FULL_ACCESS: 'Full Access' };

/** The rule a field declares in the SDL with @auth(ability:) or @public, if any. */
export function accessRuleOf(field: GraphQLField<unknown, unknown>): AccessRule | undefined {
  for (const directive of field.astNode?.directives ?? []) {
    if (directive.name.value === 'public') return { public: true };
    if (directive.name.value === 'auth') {
      const arg = directive.arguments?.find((a) => a.name.value === 'ability');
      if (arg?.value.kind === Kind.ENUM) return { public: false, ability: arg.value.value as Ability };
    }
  }
  return undefined;
}

/** Throws the 401 or 403 the caller has earned, or returns its principal. */
export function requireAbility(context: GraphQLContext, ability: Ability): Principal {
  const principal = context.principal;
  if (!principal) {
    throw new DomainError(
      'UNAUTHENTICATED',
      context.credentialRejected
        ? 'The API key or access token is invalid, expired or revoked.'
        : 'Authentication required: send an API key in the X-API-KEY header or a bearer token in Authorization.',
    );
  }
  if (!principal.abilities.has(ability)) {
    const levels = levelsGranting(ability).map((l) => LEVEL_NAMES[l]);
    throw new DomainError('FORBIDDEN', `This credential's permission does not allow this operation; it needs ${levels.join(' or ')}.`);
  }
  return principal;
}

/**
 * Enforces every root field's declared rule before its resolver runs. A root field with no rule
 * stops start-up: access is declared in one place (the SDL), and an undeclared field is a bug.
 * Nested fields are reached only through a root field, so they inherit its check.
 */
export function enforceAccessRules(schema: GraphQLSchema): GraphQLSchema {
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    if (!root) continue;
    for (const field of Object.values(root.getFields())) {
      if (FEDERATION_FIELDS.has(field.name)) continue;
      const rule = accessRuleOf(field);
      if (!rule) throw new Error(`${root.name}.${field.name} declares neither @auth(ability:) nor @public in schema/.`);
      if (rule.public) continue;
      const { ability } = rule;
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context: GraphQLContext, info) => {
        requireAbility(context, ability);
        return resolve(source, args, context, info);
      };
      if (field.subscribe) {
        const subscribe = field.subscribe;
        field.subscribe = (source, args, context: GraphQLContext, info) => {
          requireAbility(context, ability);
          return subscribe(source, args, context, info);
        };
      }
    }
  }
  return schema;
}
