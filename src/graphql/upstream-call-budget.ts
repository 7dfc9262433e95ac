import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  getNamedType,
  GraphQLError,
  type GraphQLNamedType,
  type GraphQLSchema,
  isObjectType,
  isInterfaceType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { graphQLExtensions } from '../domain/error-mapping.js';
import { DomainError } from '../domain/errors.js';
import type { GraphQLContext } from './context.js';

/**
 * The upstream calls a field of a facade's graph makes when it resolves, at worst (the user's is
 * usually answered from the credential's cache; counted anyway). Every one is a root field: the
 * facade's graph has no field under a list that calls the upstream, so an operation's worst case
 * does not grow with its page sizes (test/facade/upstream-bounds.test.ts holds both).
 */
export const UPSTREAM_CALLS: Readonly<Record<string, number>> = {
  'Query.me': 1,
  'Query.billRecords': 1,
  'Query.billRecord': 1,
  'Query.offrampAssets': 1,
  'Query.offrampQuote': 1,
  'Query.solanaWallet': 1,
  'Query.swapQuote': 1,
  'Query.evmWallet': 1,
  'Query.evmNetworks': 1,
  'Query.evmBalance': 1,
  'Query.evmTokenBalance': 1,
  // The upstream's portfolio is one answer: its balances are not asked one by one.
  'Query.evmPortfolio': 1,
  'Mutation.validateBillCustomer': 1,
  'Mutation.buyAirtime': 1,
  'Mutation.payElectricity': 1,
  'Mutation.buyMobileData': 1,
  'Mutation.subscribeCableTv': 1,
  'Mutation.depositWithPaymentMethod': 1,
  'Mutation.transferSolanaToken': 1,
  'Mutation.swapTokens': 1,
  'Mutation.sendEvmNative': 1,
  'Mutation.sendEvmToken': 1,
  'Mutation.createBusinessCustomer': 1,
  // Whose the read key is: the upstream's user of that key.
  'Mutation.registerUpstreamWebhookSecret': 1,
};

/**
 * A payment's answer lacks these (the spec's payment answers leave them out): asking any of them
 * reads the record by reference, one call per answer (resolvers/bills.ts).
 */
const STORED_FORM_ONLY = new Set(['updatedAt', 'deletedDate', 'providerData']);

/**
 * The most upstream calls an operation can make, counted over its document as the cost limit
 * (GRAPHQL_MAX_COST) counts fields: each aliased field on its own, fields of one name in one
 * selection merged as graphql-js merges them, every fragment and every @skip/@include'd field
 * included (the worst case, whatever the variables). Worked out once per parsed operation.
 */
export function worstCaseUpstreamCalls(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
): number {
  const known = counted.get(operation);
  if (known !== undefined) return known;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const root = schema.getRootType(operation.operation);
  const calls = root ? callsIn(schema, fragments, root, [operation.selectionSet]) : 0;
  counted.set(operation, calls);
  return calls;
}

const counted = new WeakMap<OperationDefinitionNode, number>();

function callsIn(
  schema: GraphQLSchema,
  fragments: Map<string, FragmentDefinitionNode>,
  parent: GraphQLNamedType,
  selectionSets: readonly SelectionSetNode[],
): number {
  let calls = 0;
  for (const [, nodes] of fieldsByResponseName(schema, fragments, parent, selectionSets)) {
    const { type, node } = nodes[0]!;
    const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[node.name.value] : undefined;
    if (!field) continue;
    calls += UPSTREAM_CALLS[`${type.name}.${field.name}`] ?? 0;
    const children = nodes.flatMap(({ node }) => (node.selectionSet ? [node.selectionSet] : []));
    if (children.length === 0) continue;
    const named = getNamedType(field.type);
    if (type === schema.getMutationType() && named.name === 'BillRecord') {
      const asked = fieldsByResponseName(schema, fragments, named, children);
      if ([...asked.values()].some((same) => STORED_FORM_ONLY.has(same[0]!.node.name.value))) calls += 1;
    }
    calls += callsIn(schema, fragments, named, children);
  }
  return calls;
}

/** The fields of selections by response name, fragments spread in (each under its type condition). */
function fieldsByResponseName(
  schema: GraphQLSchema,
  fragments: Map<string, FragmentDefinitionNode>,
  parent: GraphQLNamedType,
  selectionSets: readonly SelectionSetNode[],
  into = new Map<string, Array<{ type: GraphQLNamedType; node: FieldNode }>>(),
  spread = new Set<string>(),
): Map<string, Array<{ type: GraphQLNamedType; node: FieldNode }>> {
  for (const set of selectionSets)
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.alias?.value ?? selection.name.value;
        const same = into.get(name);
        if (same) same.push({ type: parent, node: selection });
        else into.set(name, [{ type: parent, node: selection }]);
        continue;
      }
      const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
      if (!fragment) continue;
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        if (spread.has(selection.name.value)) continue;
        spread.add(selection.name.value);
      }
      const condition = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : parent;
      fieldsByResponseName(schema, fragments, condition ?? parent, [fragment.selectionSet], into, spread);
    }
  return into;
}

/**
 * Before a facade runs an operation: refused when its worst case is over UPSTREAM_CALL_BUDGET, or
 * while the partner must wait or has used its calls per minute (upstream-bounds.ts); nothing is
 * sent upstream then. Undefined when it may run at once (the service's graph, no upstream call).
 */
export function upstreamBudgetRefusal(
  schema: GraphQLSchema,
  context: GraphQLContext,
  document: DocumentNode,
  operation: OperationDefinitionNode,
): Promise<void> | undefined {
  const bounds = context.services.upstreamBounds;
  // No principal: nothing reaches the upstream, and every guarded field answers why (a refused
  // credential, or the upstream's own refusal of it while learning whose it is).
  if (!bounds || !context.principal) return undefined;
  try {
    const admitted = bounds.admit(worstCaseUpstreamCalls(schema, document, operation), context.credential);
    return admitted?.catch((error: unknown) => {
      throw asOperationError(error);
    });
  } catch (error) {
    return Promise.reject(asOperationError(error));
  }
}

/** A refusal of the whole operation, with its status and (for a wait) Retry-After on the HTTP answer. */
function asOperationError(error: unknown): unknown {
  if (!(error instanceof DomainError)) return error;
  const extensions = graphQLExtensions(error);
  if (error.retryAfter !== undefined)
    extensions['http'] = {
      status: error.status,
      headers: new Map([['retry-after', String(Math.max(1, Math.ceil(error.retryAfter)))]]),
    };
  return new GraphQLError(error.message, { extensions, originalError: error });
}
