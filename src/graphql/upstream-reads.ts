import DataLoader from 'dataloader';
import type { GraphQLContext } from './context.js';

/**
 * Facade mode: the upstream reads of one request, through one DataLoader, keyed by what they ask
 * (`billRecord:REF`, the records list with its filter): however many fields of the answer ask the
 * same thing (aliases, a payment's stored form and a lookup of the same record), the upstream is
 * asked once. The spec has no request for many records at once, so a read is one call per key.
 * Built per request with the loaders: nothing is kept from one request to the next.
 */
export class UpstreamReads {
  private readonly pending = new Map<string, () => Promise<unknown>>();
  private readonly loader = new DataLoader<string, unknown>((keys) =>
    Promise.all(keys.map((key) => this.pending.get(key)!().catch((error: unknown) => asError(error)))),
  );

  read<T>(key: string, read: () => Promise<T>): Promise<T> {
    if (!this.pending.has(key)) this.pending.set(key, read);
    return this.loader.load(key) as Promise<T>;
  }
}

/** DataLoader rejects a key whose answer is an Error instance (and only then). */
const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/**
 * A read of the upstream, once per request per key in facade mode; in service mode the domain's
 * own read as it is (its loaders batch the database).
 */
export function upstreamRead<T>(context: GraphQLContext, key: string, read: () => Promise<T>): Promise<T> {
  if (!context.services.upstream) return read();
  return context.loaders.upstreamReads.read(key, read);
}
