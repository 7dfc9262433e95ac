import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSchema } from 'graphql';
import { createClient } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { SharedNextFrames } from '../../src/graphql/shared-next-frames.js';
import { serveGraphQLWs } from '../../src/graphql/ws-transport.js';
import { signal, waitUntil, waitUntilUnchanged } from '../helpers/wait.js';

const schema = buildSchema('type Query { ok: Boolean } type Subscription { ticks(size: Int!): String! }');
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function serve(roots: Record<string, object>) {
  const http = createServer();
  const wss = new WebSocketServer({ server: http, path: '/graphql' });
  const transport = serveGraphQLWs({ schema, roots: { subscription: roots } }, wss);
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  closers.push(async () => {
    await transport.dispose();
    wss.close();
    http.closeAllConnections();
    http.close();
  });
  return `ws://127.0.0.1:${(http.address() as AddressInfo).port}/graphql`;
}

describe('SharedNextFrames', () => {
  it('serialises a result once and puts it in place of the placeholder of every frame that carries it', () => {
    const frames = new SharedNextFrames();
    const result = { data: { events: { id: 'e1', data: { note: '"payload":{"__sharedFrame":"1"}}' } } } };
    const stringify = JSON.stringify;
    let serialisations = 0;
    JSON.stringify = ((...args: Parameters<typeof stringify>) => {
      if (args[0] === result) serialisations++;
      return stringify(...args);
    }) as typeof stringify;
    try {
      const sent = ['1', '2', '3'].map((id) =>
        frames.frameOf(
          stringify({ id, type: 'next', payload: frames.onNext(undefined, id, undefined, undefined, result) }),
        ),
      );
      expect(serialisations).toBe(1);
      expect(sent.map((frame) => JSON.parse(frame))).toEqual(
        ['1', '2', '3'].map((id) => ({ id, type: 'next', payload: result })),
      );
    } finally {
      JSON.stringify = stringify;
    }
  });

  it('leaves frames without a placeholder, or with an unknown one, as they are', () => {
    const frames = new SharedNextFrames();
    for (const frame of [
      '{"type":"connection_ack"}',
      '{"id":"1","type":"complete"}',
      '{"id":"1","type":"next","payload":{"__sharedFrame":"zz"}}',
    ]) {
      expect(frames.frameOf(frame)).toBe(frame);
    }
  });
});

describe('graphql-ws transport', () => {
  it('sends identical results to every subscriber, and one leaving does not end the others', async () => {
    // The stream holds after two ticks until the first client has left, so the others go on
    // without it rather than having received everything before it left.
    const firstLeft = signal();
    const url = await serve({
      ticks: async function* () {
        for (let i = 0; i < 5; i++) {
          yield { ticks: `tick ${i}` };
          if (i === 1) await firstLeft.promise;
        }
      },
    });
    const clients = [0, 1, 2].map(() => createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0 }));
    closers.push(async () => void (await Promise.all(clients.map((c) => c.dispose()))));
    const received = await Promise.all(
      clients.map(
        (client, n) =>
          new Promise<string[]>((resolve, reject) => {
            const seen: string[] = [];
            const stop = client.subscribe<{ ticks: string }>(
              { query: 'subscription { ticks(size: 1) }' },
              {
                next: (m) => {
                  seen.push(m.data!.ticks);
                  // The first client leaves after two messages.
                  if (n === 0 && seen.length === 2) {
                    stop();
                    resolve(seen);
                    firstLeft.resolve();
                  }
                },
                error: reject,
                complete: () => resolve(seen),
              },
            );
          }),
      ),
    );
    expect(received[0]).toEqual(['tick 0', 'tick 1']);
    expect(received[1]).toEqual(['tick 0', 'tick 1', 'tick 2', 'tick 3', 'tick 4']);
    expect(received[2]).toEqual(received[1]);
  });

  it('stops pulling results while the peer does not read (backpressure), and resumes when it does', async () => {
    let produced = 0;
    const url = await serve({
      ticks: async function* ({ size }: { size: number }) {
        const chunk = 'x'.repeat(size);
        for (;;) {
          produced++;
          yield { ticks: chunk };
        }
      },
    });
    const socket = new WebSocket(url, 'graphql-transport-ws');
    closers.push(async () => void socket.terminate());
    await once(socket, 'open');
    socket.send(JSON.stringify({ type: 'connection_init' }));
    await once(socket, 'message');
    let received = 0;
    socket.on('message', () => received++);
    socket.send(
      JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { ticks(size: 65536) }' } }),
    );
    await waitUntil(() => received > 0);
    // The reader stops reading: the server must stop producing once its queue is full.
    (socket as unknown as { _socket: import('node:net').Socket })._socket.pause();
    // Loopback buffers absorb a few MB first; then production must stop. Without backpressure the
    // generator would run on without bound and never go quiet for half a second.
    const whilePaused = await waitUntilUnchanged(() => produced, { quietMs: 500, timeoutMs: 10_000, intervalMs: 50 });
    expect(whilePaused * 65_536).toBeLessThan(256 * 1024 * 1024);
    const receivedBefore = received;
    (socket as unknown as { _socket: import('node:net').Socket })._socket.resume();
    await waitUntil(() => received > receivedBefore && produced > whilePaused);
  });
});
