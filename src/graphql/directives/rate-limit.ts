import { type GraphQLField, valueFromASTUntyped } from 'graphql';
import { getFieldIdentity } from 'graphql-rate-limit';
import ms from 'ms';
import type { LimitRule } from '../../domain/limits/rate-limiter.js';
import type { GraphQLContext } from '../context.js';

/**
 * A field's own limit, declared as graphql-rate-limit's directive declares it:
 * `@rateLimit(max: 10, window: "1m", message: "…", identityArgs: ["reference"])`. Its arguments
 * and field-identity rule come from that package; counting does not (its stores read, filter and
 * write back timestamps, so two concurrent calls can both pass), see RateLimiter.
 */
export interface FieldLimit {
  rule: LimitRule;
  identityArgs: string[];
}

export function fieldLimitOf(field: GraphQLField<unknown, unknown>): FieldLimit | undefined {
  const directive = field.astNode?.directives?.find((d) => d.name.value === 'rateLimit');
  if (!directive) return undefined;
  const args = Object.fromEntries(
    (directive.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value)]),
  ) as {
    max?: number;
    window?: string;
    message?: string;
    identityArgs?: string[];
  };
  const windowMs = ms((args.window ?? '1m') as ms.StringValue);
  if (!args.max || !windowMs) throw new Error(`@rateLimit on ${field.name} needs max and a window like "1m"`);
  return {
    rule: { name: `field:${field.name}`, max: args.max, windowMs, ...(args.message ? { message: args.message } : {}) },
    identityArgs: args.identityArgs ?? [],
  };
}

/** The caller's identity for limits: its credential, or its IP when anonymous. */
export function limitIdentity(context: GraphQLContext): string {
  return context.principal ? `cred:${context.principal.credentialId}` : `ip:${context.clientIp}`;
}

/**
 * Counts one operation against the caller's default budget, and against the field's own limit
 * when it has one. Called once per root field executed, so aliases count one each.
 */
export function consumeLimits(
  context: GraphQLContext,
  fieldName: string,
  fieldLimit: FieldLimit | undefined,
  args: unknown,
): Promise<void> {
  const { rateLimiter, limitPolicy } = context.services;
  const identity = limitIdentity(context);
  const counted = rateLimiter.consume(context.principal ? limitPolicy.perCredential : limitPolicy.anonymous, identity);
  if (!fieldLimit) return counted;
  return counted.then(() =>
    rateLimiter.consume(fieldLimit.rule, `${identity}:${getFieldIdentity(fieldName, fieldLimit.identityArgs, args)}`),
  );
}
