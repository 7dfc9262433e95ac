import { ApolloArmor } from '@escape.tech/graphql-armor';
import { type DocumentNode, GraphQLError, type GraphQLSchema, type ValidationRule, validate } from 'graphql';
import type { GraphQLAccess } from '../domain/graphql-access/graphql-access.js';

/**
 * A credential's own cost and depth limits (GraphQLAccess.maxCost/maxDepth), checked by the same
 * graphql-armor rules as the gateway's (hardening.ts), after the gateway's have passed: a
 * credential's limits only tighten them. Each (document, limits) pair is checked once: Apollo and
 * graphql-ws hand the same DocumentNode for the same text.
 */
export function credentialLimitRefusal(
  schema: GraphQLSchema,
  document: DocumentNode,
  access: GraphQLAccess,
): GraphQLError | undefined {
  if (access.maxCost === null && access.maxDepth === null) return undefined;
  const key = `${access.maxCost ?? ''}/${access.maxDepth ?? ''}`;
  let checked = checks.get(document);
  if (!checked) checks.set(document, (checked = new Map()));
  let found = checked.get(key);
  if (found === undefined) {
    const [error] = validate(schema, document, rulesOf(access.maxCost, access.maxDepth, key));
    found = error
      ? new GraphQLError(`${error.message} This credential's own limit (its GraphQL access settings).`, {
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400 } },
        })
      : null;
    checked.set(key, found);
  }
  return found ?? undefined;
}

const checks = new WeakMap<DocumentNode, Map<string, GraphQLError | null>>();
const rules = new Map<string, ValidationRule[]>();

function rulesOf(maxCost: number | null, maxDepth: number | null, key: string): ValidationRule[] {
  let found = rules.get(key);
  if (!found) {
    const armor = new ApolloArmor({
      costLimit: maxCost === null ? { enabled: false } : { maxCost },
      maxDepth: maxDepth === null ? { enabled: false } : { n: maxDepth },
      maxAliases: { enabled: false },
      maxDirectives: { enabled: false },
      maxTokens: { enabled: false },
      blockFieldSuggestion: { enabled: false },
    });
    found = armor.protect().validationRules as ValidationRule[];
    // Few distinct settings exist; the bound keeps a pathological set from growing without end.
    if (rules.size > 1_000) rules.clear();
    rules.set(key, found);
  }
  return found;
}
