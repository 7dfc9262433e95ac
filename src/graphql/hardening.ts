import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { ValidationRule } from 'graphql';
import type { Config } from '../config.js';
import { introspectionRefusal } from './introspection-refusal.js';

/**
 * Limits every client operation must pass before any resolver runs: depth, aliases, cost and
 * directives (graphql-armor validation rules, answered as 400 GRAPHQL_VALIDATION_FAILED), plus
 * field-suggestion blocking and no introspection when introspection is off. The token limit is the
 * parser's own `maxTokens` (see `parseOptions`): armor's Apollo token plugin re-parses inside a
 * plugin hook, where any syntax error (over the limit or not) became an HTTP 500. REST routes run
 * fixed operations reviewed in code, so they skip these.
 */
export function createArmor(config: Config) {
  const armor = new ApolloArmor({
    maxDepth: { n: config.GRAPHQL_MAX_DEPTH },
    maxAliases: { n: config.GRAPHQL_MAX_ALIASES },
    costLimit: { maxCost: config.GRAPHQL_MAX_COST },
    maxTokens: { enabled: false },
    maxDirectives: { n: config.GRAPHQL_MAX_DIRECTIVES },
    blockFieldSuggestion: { enabled: !config.GRAPHQL_INTROSPECTION },
  });
  return armor.protect();
}

/** The parser options every client document is parsed with (HTTP and WebSocket). */
export const parseOptionsOf = (config: Config) => ({ maxTokens: config.GRAPHQL_MAX_TOKENS });

/** The validation rules of every client operation: the limits, and no introspection when it is off. */
export function validationRulesOf(config: Config, armor = createArmor(config)): ValidationRule[] {
  const rules = armor.validationRules as ValidationRule[];
  return config.GRAPHQL_INTROSPECTION ? rules : [...rules, introspectionRefusal];
}

/** The same rules for graphql-ws, which validates operations outside Apollo. */
export const webSocketValidationRules = (config: Config): ValidationRule[] => validationRulesOf(config);
