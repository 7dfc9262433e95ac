import {
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { GraphQLContext } from './context.js';

/**
 * The root mutations that move money or tokens. Each honours the `Idempotency-Key` header (its
 * service claims the key), and the REST routes that run them declare the header in OpenAPI.
 */
export const VALUE_MOVING_MUTATIONS: ReadonlySet<string> = new Set([
  // NGN wallet: deposits, their authorization steps, payouts, transfers between wallets.
  'depositWithPaymentMethod',
  'depositByBankTransfer',
  'depositByUssd',
  'createPaymentLink',
  'fundWallet',
  'authorizeDeposit',
  'simulateVirtualAccountTransfer',
  'withdraw',
  'transfer',
  // Bills.
  'buyAirtime',
  'buyMobileData',
  'subscribeCableTv',
  'payElectricity',
  // Solana.
  'transferSolanaToken',
  'transferSol',
  'swapTokens',
  'sandboxSolanaFaucet',
  // EVM.
  'sendEvmNative',
  'sendEvmToken',
  'sandboxEvmFaucet',
  // Offramp.
  'initiateOfframpOrder',
  'simulateOfframpDeposit',
  // Sandbox event triggers run the operations above.
  'triggerSandboxEvent',
]);

/** How many value-moving root fields a selection holds, through fragments and aliases alike. */
export function countValueMoving(
  selectionSet: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode | undefined>,
  seen = new Set<string>(),
): number {
  let count = 0;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (VALUE_MOVING_MUTATIONS.has(selection.name.value)) count++;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      count += countValueMoving(selection.selectionSet, fragments, seen);
    } else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = fragments[selection.name.value];
      if (fragment) count += countValueMoving(fragment.selectionSet, fragments, seen);
    }
  }
  return count;
}

/**
 * One Idempotency-Key names one request's effect. A mutation that selects two value-moving fields
 * (two transfers, or one field under two aliases) under one key cannot replay both, so it is refused
 * before any resolver runs, with nothing moved. The error to answer, or undefined.
 */
export function valueMovingRefusal(
  contextValue: Pick<GraphQLContext, 'idempotencyKey'>,
  operation: OperationDefinitionNode | undefined,
  document: DocumentNode,
): GraphQLError | undefined {
  if (!contextValue.idempotencyKey || operation?.operation !== 'mutation') return undefined;
  const fragments = Object.fromEntries(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );
  const count = countValueMoving(operation.selectionSet, fragments);
  if (count <= 1) return undefined;
  return new GraphQLError(
    `This request carries an Idempotency-Key and selects ${count} fields that move money or tokens; one key covers one. Send each in its own request with its own key.`,
    { extensions: { code: 'BAD_USER_INPUT', field: 'Idempotency-Key', http: { status: 400 } } },
  );
}
