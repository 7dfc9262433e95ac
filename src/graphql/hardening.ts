import { ApolloArmor } from '@escape.tech/graphql-armor';
import { NoSchemaIntrospectionCustomRule, type ValidationRule } from 'graphql';
import type { Config } from '../config.js';

/**
 * Limits every client operation must pass before any resolver runs: depth, aliases, cost, tokens
 * and directives (graphql-armor), plus field-suggestion blocking and no introspection when
 * introspection is off. REST routes run fixed operations reviewed in code, so they skip these.
 */
export function createArmor(config: Config) {
  const armor = new ApolloArmor({
    maxDepth: { n: config.GRAPHQL_MAX_DEPTH },
    maxAliases: { n: config.GRAPHQL_MAX_ALIASES },
    costLimit: { maxCost: config.GRAPHQL_MAX_COST },
    maxTokens: { n: config.GRAPHQL_MAX_TOKENS },
    maxDirectives: { n: config.GRAPHQL_MAX_DIRECTIVES },
    blockFieldSuggestion: { enabled: !config.GRAPHQL_INTROSPECTION },
  });
  return armor.protect();
}

/** The same rules for graphql-ws, which validates operations outside Apollo. */
export function webSocketValidationRules(config: Config): ValidationRule[] {
  const rules = createArmor(config).validationRules;
  return config.GRAPHQL_INTROSPECTION ? rules : [...rules, NoSchemaIntrospectionCustomRule];
}
