import { LRUCache } from 'lru-cache';
import { createSourceEventStream, type ExecutionArgs, type ExecutionResult, execute, print } from 'graphql';
import type { GraphQLContext } from './context.js';

/**
 * Subscription execution that runs each event's selection once per (event, document, variables,
 * caller) and shares the result among every subscriber asking the same thing: 100 dashboards of
 * one account cost one execution per event, not 100. Everything else is graphql-js's own
 * subscribe: the source stream (with its access checks) comes from createSourceEventStream.
 */
export function createSharedSubscribe() {
  const results = new LRUCache<string, Promise<ExecutionResult>>({ max: 10_000, ttl: 30_000 });
  const documentKeys = new WeakMap<object, string>();

  const keyOf = (args: ExecutionArgs): string => {
    let documentKey = documentKeys.get(args.document);
    if (!documentKey) {
      documentKey = print(args.document);
      documentKeys.set(args.document, documentKey);
    }
    const { after: _after, ...variables } = (args.variableValues ?? {}) as Record<string, unknown>;
    const principal = (args.contextValue as GraphQLContext).principal;
    const caller = principal ? `${principal.userId}:${principal.environment}:${[...principal.abilities].sort().join(',')}` : 'anonymous';
    return `${caller}\u0000${args.operationName ?? ''}\u0000${JSON.stringify(variables)}\u0000${documentKey}`;
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
        const cacheKey = `${event.id ?? ''}\u0000${key}`;
        let result = results.get(cacheKey);
        if (!result) {
          result = Promise.resolve(execute({ ...args, rootValue: event }));
          results.set(cacheKey, result);
        }
        return { done: false, value: await result };
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
