import { createSourceEventStream, type ExecutionArgs, type ExecutionResult, execute, print } from 'graphql';
import type { GraphQLContext } from './context.js';

/** How many (event, selection) results are kept; the oldest go first. */
const MAX_CACHED_RESULTS = 10_000;

/**
 * Subscription execution that runs each event's selection once per (event, document, variables,
 * caller) and shares the result among every subscriber asking the same thing: 100 dashboards of
 * one account cost one execution per event, not 100. Everything else is graphql-js's own
 * subscribe: the source stream (with its access checks) comes from createSourceEventStream.
 *
 * The cache is a plain Map evicted oldest-first (insertion order): the subscribers of an event all
 * ask within a few milliseconds of each other, so recency tracking and expiry timers (an LRU with a
 * TTL, measured) cost more than the executions they would save.
 */
export function createSharedSubscribe() {
  const results = new Map<string, Promise<ExecutionResult>>();
  const documentKeys = new WeakMap<object, string>();
  // Each distinct (caller, operation, variables, document) gets a short number, so the per-event
  // cache key stays short however large the document is.
  // Numbers are never reused (a reused one could hand a cached result to another caller); the
  // table is emptied when it grows large, which only costs re-numbering live selections.
  const selectionIds = new Map<string, number>();
  let nextSelectionId = 0;

  const keyOf = (args: ExecutionArgs): string => {
    let documentKey = documentKeys.get(args.document);
    if (!documentKey) {
      documentKey = print(args.document);
      documentKeys.set(args.document, documentKey);
    }
    const { after: _after, ...variables } = (args.variableValues ?? {}) as Record<string, unknown>;
    const principal = (args.contextValue as GraphQLContext).principal;
    const caller = principal
      ? `${principal.userId}:${principal.environment}:${[...principal.abilities].sort().join(',')}`
      : 'anonymous';
    const selection = `${caller}\u0000${args.operationName ?? ''}\u0000${JSON.stringify(variables)}\u0000${documentKey}`;
    let id = selectionIds.get(selection);
    if (id === undefined) {
      if (selectionIds.size >= MAX_CACHED_RESULTS) selectionIds.clear();
      id = nextSelectionId++;
      selectionIds.set(selection, id);
    }
    return String(id);
  };

  const resultFor = (
    cacheKey: string,
    run: () => ExecutionResult | Promise<ExecutionResult>,
  ): Promise<ExecutionResult> => {
    let result = results.get(cacheKey);
    if (!result) {
      result = Promise.resolve(run());
      results.set(cacheKey, result);
      if (results.size > MAX_CACHED_RESULTS) results.delete(results.keys().next().value!);
    }
    return result;
  };

  return async (args: ExecutionArgs): Promise<AsyncIterable<ExecutionResult> | ExecutionResult> => {
    const source = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in source)) return source as ExecutionResult;
    const key = keyOf(args);
    const iterator = (source as AsyncIterable<{ id?: string }>)[Symbol.asyncIterator]();
    // Both iterable and iterator, as graphql-js's own mapped streams are: graphql-ws ends a
    // subscription by calling `return` on what it was given.
    const shared: AsyncIterableIterator<ExecutionResult> = {
      async next(): Promise<IteratorResult<ExecutionResult>> {
        const step = await iterator.next();
        if (step.done) return { done: true, value: undefined };
        const event = step.value;
        const value = await resultFor(`${event.id ?? ''}\u0000${key}`, () => execute({ ...args, rootValue: event }));
        return { done: false, value };
      },
      async return(): Promise<IteratorResult<ExecutionResult>> {
        await iterator.return?.();
        return { done: true, value: undefined };
      },
      async throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
        await iterator.return?.();
        throw error;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    return shared;
  };
}
