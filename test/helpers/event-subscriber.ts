import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { waitUntil } from './wait.js';

export interface StreamedEvent {
  id: string;
  seq: number;
  type: string;
  created: number;
  data: Record<string, unknown>;
}

/**
 * A graphql-ws client subscribed to the caller's `events` (of some kinds, after a `seq`), as a
 * partner's live consumer is: what arrives collects in `received`; a refusal or a transport error
 * in `failure`. `after: 0` also replays what committed before the subscription went live.
 */
export function subscribeToEvents(wsUrl: string, key: string, options: { types?: string[]; after?: number } = {}) {
  const client = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: { 'x-api-key': key },
    retryAttempts: 0,
  });
  const received: StreamedEvent[] = [];
  let failure: unknown;
  const args = [options.types ? `types: ${JSON.stringify(options.types)}` : '', `after: ${options.after ?? 0}`].filter(
    Boolean,
  );
  client.subscribe<{ events: StreamedEvent }>(
    { query: `subscription { events(${args.join(', ')}) { id seq type created data } }` },
    {
      next: (message) =>
        message.errors ? (failure = message.errors) : message.data && received.push(message.data.events),
      error: (error) => (failure = error),
      complete: () => undefined,
    },
  );
  let closedWith: { code: number; reason: string } | undefined;
  client.on('closed', (event) => {
    const { code, reason } = event as { code: number; reason: string };
    closedWith = { code, reason };
  });
  return {
    received,
    failure: () => failure,
    /**
     * Waits until an event matching `wanted` has arrived. A refusal or a closed socket ends the wait
     * at once with what the server said (code and reason), instead of waiting out the deadline.
     */
    async until(wanted: (event: StreamedEvent) => boolean): Promise<StreamedEvent> {
      await waitUntil(() => {
        if (received.some(wanted)) return true;
        if (failure !== undefined || closedWith)
          throw new Error(
            `the subscription ended before the event arrived: ${JSON.stringify({ closedWith, failure: String(failure) })}`,
          );
        return false;
      });
      return received.find(wanted)!;
    },
    /** The server's close code and reason, once the socket has closed. */
    closed: () => closedWith,
    close: () => client.dispose(),
  };
}
