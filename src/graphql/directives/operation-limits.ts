import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  getArgumentValues,
  getVariableValues,
  Kind,
  type OperationDefinitionNode,
} from 'graphql';
import { collectFields } from 'graphql/execution/collectFields.js';
import type { ObjMap } from 'graphql/jsutils/ObjMap.js';
import type { GraphQLContext } from '../context.js';
import { type AccessRule, requireAbility } from './auth.js';
import { consumeLimits, type FieldLimit } from './rate-limit.js';

/** What a guarded root query field counts before its resolver runs (registered by guards.ts). */
export interface RootGuard {
  rule: AccessRule;
  fieldLimit: FieldLimit | undefined;
}

const rootGuards = new WeakMap<GraphQLField<unknown, unknown>, RootGuard>();

export function registerRootGuard(field: GraphQLField<unknown, unknown>, guard: RootGuard): void {
  rootGuards.set(field, guard);
}

/** A root field whose access was checked and whose limits were counted before execution. */
export const COUNTED = Symbol('counted');
type Outcome = typeof COUNTED | Error;

/**
 * What an operation's root fields counted, kept on the context it runs with (a symbol-keyed
 * property: a WeakMap from contexts to the operations' counts cost a new ephemeron entry and a new
 * inner map per request): each root field's response name → what its count came to. Kept per
 * operation too, because a batched request (GRAPHQL_BATCHING) could run several operations with
 * one context: a mutation or another query with the same response name must never read this
 * query's count as its own. Apollo gives each operation its own copy of the context today, so the
 * list has one entry.
 */
interface Precounted {
  operation: OperationDefinitionNode;
  outcomes: Map<string, Outcome>;
  next: Precounted | undefined;
}
const PRECOUNTED = Symbol('precounted root fields');
type CountedContext = { [PRECOUNTED]?: Precounted };
const NOTHING = () => undefined;

/**
 * Counts a query's root fields before it executes, each exactly as its guard would have counted it
 * (access first, then the default budget and the field's own @rateLimit, aliases one each, @skip
 * and @include honoured), so that each guard finds its count done and the field resolves without
 * a promise of its own: a guard counting per field made every root field, and so every query,
 * asynchronous. The counts start in the order the fields execute, in the same turn, as the guards
 * started them. Anything the guards must do differently is left to them: a mutation (its fields
 * run one after another, each after the one before has taken effect), a rejected credential (whose
 * failed-authentication charge is asynchronous), variables or arguments that do not coerce (no
 * resolver runs for them, so nothing is counted).
 */
export function countQueryLimits(
  schema: GraphQLSchema,
  context: GraphQLContext,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | undefined,
): Promise<void> | undefined {
  if (operation.operation !== 'query' || (!context.principal && context.credentialRejected)) return undefined;
  const queryType = schema.getQueryType();
  if (!queryType) return undefined;
  const fields = operation.variableDefinitions?.length
    ? rootFieldsOf(schema, queryType, document, operation, variables)
    : constantRootFields(schema, queryType, document, operation);
  if (!fields) return undefined;
  const outcomes = new Map<string, Outcome>();
  // One count (a query of one root field, the common case) is answered as it is: each promise
  // costs a hook with an async-local store in the process.
  let first: Promise<void> | undefined;
  let all: Array<Promise<void>> | undefined;
  for (const { responseName, field, guard, args } of fields) {
    try {
      // checkAccess without a rejected credential. A refused access is thrown by the guard itself,
      // with nothing counted.
      if (!guard.rule.public) requireAbility(context, guard.rule.ability);
    } catch {
      continue;
    }
    if (args instanceof Error) continue;
    const count = consumeLimits(context, field.name, guard.fieldLimit, args).then(
      () => void outcomes.set(responseName, COUNTED),
      (error: Error) => void outcomes.set(responseName, error),
    );
    if (!first) first = count;
    else (all ??= [first]).push(count);
  }
  if (!first) return undefined;
  const holder = context as CountedContext;
  holder[PRECOUNTED] = { operation, outcomes, next: holder[PRECOUNTED] };
  return all ? Promise.all(all).then(NOTHING) : first;
}

/** A guarded root field as the operation executes it, with its arguments (or why they do not coerce). */
interface RootField {
  responseName: string;
  field: GraphQLField<unknown, unknown>;
  guard: RootGuard;
  args: Record<string, unknown> | Error;
}

/**
 * Without variables an operation always executes the same root fields with the same arguments:
 * worked out once per parsed operation (Apollo hands the same document for the same text).
 */
const constantFields = new WeakMap<OperationDefinitionNode, RootField[]>();

function constantRootFields(
  schema: GraphQLSchema,
  queryType: GraphQLObjectType,
  document: DocumentNode,
  operation: OperationDefinitionNode,
): RootField[] | undefined {
  let found = constantFields.get(operation);
  if (!found) {
    found = rootFieldsOf(schema, queryType, document, operation, undefined);
    if (!found) return undefined;
    constantFields.set(operation, found);
  }
  return found;
}

/** The guarded root fields graphql-js executes, in its order; undefined when the variables do not coerce. */
function rootFieldsOf(
  schema: GraphQLSchema,
  queryType: GraphQLObjectType,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | undefined,
): RootField[] | undefined {
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}, { maxErrors: 1 });
  if (coerced.errors) return undefined;
  const fragments: ObjMap<FragmentDefinitionNode> = Object.create(null);
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  const fields = queryType.getFields();
  const found: RootField[] = [];
  for (const [responseName, nodes] of collectFields(
    schema,
    fragments,
    coerced.coerced,
    queryType,
    operation.selectionSet,
  )) {
    const node = nodes[0] as FieldNode;
    const field = fields[node.name.value];
    const guard = field && rootGuards.get(field);
    if (!field || !guard) continue;
    let args: Record<string, unknown> | Error;
    try {
      args = getArgumentValues(field, node, coerced.coerced);
    } catch (error) {
      args = error as Error;
    }
    found.push({ responseName, field, guard, args });
  }
  return found;
}

/** What a root field's count came to before execution, or undefined when its guard must count it. */
export function countedBefore(
  context: GraphQLContext,
  operation: OperationDefinitionNode,
  responseName: string | number,
): Outcome | undefined {
  if (operation.operation !== 'query') return undefined;
  for (let entry = (context as CountedContext)[PRECOUNTED]; entry; entry = entry.next)
    if (entry.operation === operation) return entry.outcomes.get(responseName as string);
  return undefined;
}
