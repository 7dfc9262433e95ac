import { metrics } from './metrics.js';

/**
 * graphql-ws hooks that keep the open-subscriptions gauge and count the results sent. A
 * subscription opens when its operation returns a stream, and closes when graphql-ws completes it
 * for any reason (client complete, stream end, error, socket closed).
 */
const open = new WeakMap<object, Set<string>>();

export const subscriptionHooks = {
  onOperation(ctx: object, id: string, _payload: unknown, _args: unknown, result: unknown): undefined {
    if (result && typeof result === 'object' && Symbol.asyncIterator in result) {
      let ids = open.get(ctx);
      if (!ids) open.set(ctx, (ids = new Set()));
      ids.add(id);
      metrics.subscriptionsOpen.inc();
    }
    return undefined;
  },
  onComplete(ctx: object, id: string): void {
    if (open.get(ctx)?.delete(id)) metrics.subscriptionsOpen.dec();
  },
};

/** Wraps graphql-ws's onNext so each result sent is counted. */
export function countingNext<A extends unknown[], R>(onNext: (...args: A) => R): (...args: A) => R {
  return (...args: A) => {
    metrics.subscriptionMessages.inc();
    return onNext(...args);
  };
}
