import type { ExecutionResult, FormattedExecutionResult } from 'graphql';

const MARKER = '__sharedFrame';
const PLACEHOLDER_PREFIX = `"payload":{"${MARKER}":"`;
/** Placeholders not sent within this many frames were dropped (their socket closed); forget them. */
const MAX_PENDING = 50_000;

/**
 * Serialises each subscription result once, however many sockets receive it. graphql-ws builds and
 * stringifies a `next` message per subscriber; its `onNext` hook may replace the payload, so the
 * payload becomes a tiny placeholder naming a token, and the transport swaps the placeholder for
 * the result's JSON, computed once per result object (shared results are the same object for every
 * subscriber, see shared-subscriptions.ts).
 */
export class SharedNextFrames {
  private readonly serialised = new WeakMap<ExecutionResult, string>();
  private readonly pending = new Map<string, string>();
  private counter = 0;

  /** For graphql-ws's `onNext`: the placeholder payload standing for `result`. */
  readonly onNext = (
    _ctx: unknown,
    _id: string,
    _payload: unknown,
    _args: unknown,
    result: ExecutionResult,
  ): FormattedExecutionResult => {
    let json = this.serialised.get(result);
    if (json === undefined) {
      json = JSON.stringify(result);
      this.serialised.set(result, json);
    }
    const token = (++this.counter).toString(36);
    this.pending.set(token, json);
    if (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    return { [MARKER]: token } as FormattedExecutionResult;
  };

  /** The frame to write: `data` with its placeholder (if any) replaced by the serialised result. */
  frameOf(data: string): string {
    if (!data.endsWith('"}}')) return data;
    const at = data.lastIndexOf(PLACEHOLDER_PREFIX);
    if (at < 0) return data;
    const token = data.slice(at + PLACEHOLDER_PREFIX.length, -3);
    const json = this.pending.get(token);
    if (json === undefined) return data;
    this.pending.delete(token);
    return `${data.slice(0, at)}"payload":${json}}`;
  }
}
