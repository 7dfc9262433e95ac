import { mayActFor } from '../../domain/auth/principal.js';
import { badInput } from '../../domain/errors.js';
import { toOfframpOrder } from '../../domain/offramp/offramp-order.js';
import { transferView } from '../../domain/solana/transfer-view.js';
import type { GraphQLContext } from '../context.js';
import { requireAbility } from '../directives/auth.js';
import type { Resolvers } from '../generated/resolvers-types.js';
import { globalId, parseGlobalId } from '../global-id.js';
import { typed } from './graph-records.js';

const MAX_NODES = 100;

/**
 * How each Node type is loaded by its own id, through the request's loaders, which see only the
 * caller's user and environment: anything else comes back null, exactly like a missing record.
 */
const LOADERS: Record<string, (context: GraphQLContext, id: string) => Promise<object | null>> = {
  User: async (context, id) => (mayActFor(context.principal!, id) ? await context.loaders.userById.load(id) : null),
  Business: (context, id) => context.loaders.businessById.load(id),
  BusinessCustomer: (context, id) => context.loaders.businessCustomerById.load(id),
  Transaction: (context, id) => context.loaders.activityByKey.load(id),
  WalletTransaction: (context, id) => context.loaders.walletTransactionById.load(id),
  Deposit: (context, id) => context.loaders.depositById.load(id),
  Payout: (context, id) => context.loaders.payoutById.load(id),
  BillRecord: (context, id) => context.loaders.billRecordById.load(id),
  // A deleted method is gone for paymentMethod(id:), so it is for node(id:) too.
  PaymentMethod: async (context, id) => {
    const row = await context.loaders.paymentMethodById.load(id);
    return row && !row.deletedAt ? row : null;
  },
  OfframpOrder: async (context, id) => {
    const row = await context.loaders.offrampOrderById.load(id);
    return row ? toOfframpOrder(row) : null;
  },
  EvmTransfer: (context, id) => context.services.evmTransfers.byId(context.principal!, id),
  SolanaTransfer: async (context, id) => {
    const row = await context.loaders.solanaTransferById.load(id);
    return row ? transferView(row) : null;
  },
};

async function loadNode(context: GraphQLContext, nodeId: string) {
  const parsed = parseGlobalId(nodeId);
  const load = parsed && Object.hasOwn(LOADERS, parsed.typeName) ? LOADERS[parsed.typeName] : undefined;
  if (!parsed || !load) return null;
  const found = await load(context, parsed.id);
  return found ? typed(parsed.typeName, found) : null;
}

/** Federation's `_entities` lands in these: the same loaders, so the same tenant and environment checks. */
const reference =
  (typeName: string) =>
  async ({ id }: { id: string }, context: GraphQLContext) => {
    requireAbility(context, 'READ');
    return (await LOADERS[typeName]!(context, id)) as never;
  };

const nodeIdOf = (typeName: string) => (record: { id?: string | undefined }) => {
  // Only a record read from an upstream lacks an id, and the graph a facade serves has no nodeId on it.
  if (record.id === undefined) throw new Error(`A ${typeName} without an id has no nodeId.`);
  return globalId(typeName, record.id);
};

export const graphNodeResolvers: Resolvers = {
  Query: {
    node: (_root, { id }, context) => loadNode(context, id) as never,
    nodes: (_root, { ids }, context) => {
      if (ids.length > MAX_NODES) throw badInput('ids', `ids may name at most ${MAX_NODES} objects.`);
      return Promise.all(ids.map((id) => loadNode(context, id))) as never;
    },
  },
  Node: { __resolveType: (node) => (node as unknown as { __typename: string }).__typename as never },
  User: { nodeId: nodeIdOf('User') },
  Business: { nodeId: nodeIdOf('Business'), __resolveReference: reference('Business') },
  BusinessCustomer: { nodeId: nodeIdOf('BusinessCustomer'), __resolveReference: reference('BusinessCustomer') },
  Transaction: { nodeId: nodeIdOf('Transaction'), __resolveReference: reference('Transaction') },
  WalletTransaction: { nodeId: nodeIdOf('WalletTransaction') },
  PaymentMethod: { nodeId: nodeIdOf('PaymentMethod') },
  Deposit: { nodeId: nodeIdOf('Deposit'), __resolveReference: reference('Deposit') },
  Payout: { nodeId: nodeIdOf('Payout'), __resolveReference: reference('Payout') },
  BillRecord: { nodeId: nodeIdOf('BillRecord'), __resolveReference: reference('BillRecord') },
  OfframpOrder: { nodeId: nodeIdOf('OfframpOrder'), __resolveReference: reference('OfframpOrder') },
  SolanaTransfer: { nodeId: nodeIdOf('SolanaTransfer') },
  EvmTransfer: { nodeId: nodeIdOf('EvmTransfer') },
};
