import { type GraphQLField, Kind } from 'graphql';
import { type Ability, LEVEL_LABELS, levelsGranting } from '../../domain/auth/permissions.js';
import type { Principal } from '../../domain/auth/principal.js';
import { scopeGranting } from '../../domain/connect/scopes.js';
import { DomainError } from '../../domain/errors.js';
import type { GraphQLContext } from '../context.js';

export type AccessRule = { public: true } | { public: false; ability: Ability };

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
    if (context.credentialRefused) throw context.credentialRefused;
    throw new DomainError(
      'UNAUTHENTICATED',
      context.credentialRejected
        ? 'The API key or access token is invalid, expired or revoked.'
        : 'Authentication required: send an API key in the X-API-KEY header or a bearer token in Authorization.',
    );
  }
  if (!principal.abilities.has(ability)) {
    const levels = levelsGranting(ability).map((l) => LEVEL_LABELS[l]);
    throw new DomainError(
      'FORBIDDEN',
      `This credential's permission does not allow this operation; it needs ${levels.join(' or ')}.`,
      { scope: scopeGranting(ability) },
    );
  }
  return principal;
}

/**
 * Applies an access rule. A rejected credential also counts against its IP's failed-authentication
 * limit, so guessing keys runs into 429 long before it could succeed.
 */
export function checkAccess(context: GraphQLContext, rule: AccessRule): Promise<void> | undefined {
  if (rule.public) return undefined;
  if (!context.principal && context.credentialRejected) {
    return chargeFailedAuthentication(context).then(() => {
      requireAbility(context, rule.ability);
    });
  }
  // The common case stays synchronous: no promise per field for a valid credential.
  requireAbility(context, rule.ability);
  return undefined;
}

/** One charge per request context, however many guarded fields (aliases, nested fields) it reaches. */
const failedAuthenticationCharges = new WeakMap<GraphQLContext, Promise<void>>();

function chargeFailedAuthentication(context: GraphQLContext): Promise<void> {
  let charge = failedAuthenticationCharges.get(context);
  if (!charge) {
    const { rateLimiter, limitPolicy } = context.services;
    charge = rateLimiter.consume(limitPolicy.authFailures, `ip:${context.clientIp}`).then(() => undefined);
    failedAuthenticationCharges.set(context, charge);
  }
  return charge;
}
