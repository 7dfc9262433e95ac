import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { ExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import type { WebSocket, WebSocketServer } from 'ws';
import { SharedNextFrames } from './shared-next-frames.js';
import { countingNext } from '../observability/subscription-hooks.js';

export interface WsExtra {
  socket: WebSocket;
  request: IncomingMessage;
}

/** How long a closing client gets to answer the close frame at shutdown before its socket is cut. */
const CLOSE_HANDSHAKE_MS = 1_000;

/** A socket whose unsent bytes exceed this makes the next send wait for the peer to read. */
const HIGH_WATER_MARK = 1024 * 1024;

/**
 * graphql-ws's protocol core (`makeServer`) on a `ws` server, in place of `graphql-ws/use/ws`,
 * which waits for every frame's write callback before producing the next and writes each frame
 * on its own. Here:
 * - a send returns at once while the socket's queue is small, and waits for its write only above
 *   HIGH_WATER_MARK, so a slow reader still pushes back;
 * - the TCP socket is corked for the rest of the event-loop turn on its first write, so a burst of
 *   events leaves in one writev per connection;
 * - `next` payloads are serialised once per result (SharedNextFrames).
 * Keep-alive pings and error handling follow use/ws.
 */
export function serveGraphQLWs<P extends Record<string, unknown> | undefined, E extends object>(
  options: ServerOptions<P, WsExtra & E>,
  wss: WebSocketServer,
  {
    keepAliveMs = 12_000,
    isProduction = false,
    formatError,
  }: {
    keepAliveMs?: number;
    isProduction?: boolean;
    /** The same formatter as HTTP GraphQL, applied to `next` results' errors and to `error` messages. */
    formatError?: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
  } = {},
): { dispose(): Promise<void> } {
  const frames = new SharedNextFrames();
  const format = (errors: readonly GraphQLError[]) => errors.map((e) => formatError!(e.toJSON(), e));
  const server = makeServer<P, WsExtra & E>({
    ...options,
    onNext: countingNext(
      options.onNext ??
        ((ctx, id, payload, args, result) =>
          frames.onNext(
            ctx,
            id,
            payload,
            args,
            formatError && result.errors?.length
              ? ({ ...result, errors: format(result.errors) } as unknown as ExecutionResult)
              : result,
          )),
    ),
    onError: options.onError ?? (formatError ? (_ctx, _id, _payload, errors) => format(errors) : undefined),
  });
  wss.options.handleProtocols = handleProtocols;
  const reasonOf = (error: unknown) =>
    isProduction ? 'Internal server error' : String(error instanceof Error ? error.message : error).slice(0, 120);

  wss.on('connection', (socket, request) => {
    socket.once('error', (error) => socket.close(CloseCode.InternalServerError, reasonOf(error)));
    const tcp = request.socket as Socket;
    let corked = false;
    const uncork = () => {
      corked = false;
      tcp.uncork();
    };
    let pongWait: NodeJS.Timeout | undefined;
    const ping =
      keepAliveMs > 0
        ? setInterval(() => {
            if (socket.readyState !== socket.OPEN) return;
            pongWait = setTimeout(() => socket.terminate(), keepAliveMs);
            socket.once('pong', () => clearTimeout(pongWait));
            socket.ping();
          }, keepAliveMs)
        : undefined;

    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) => {
          // Nothing to write any more; yield to the event loop so the close is handled (and the
          // subscription ended) even when the source produces without ever waiting.
          if (socket.readyState !== socket.OPEN) return new Promise<void>((resolve) => setImmediate(resolve));
          if (!corked) {
            corked = true;
            tcp.cork();
            setImmediate(uncork);
          }
          const frame = frames.frameOf(data);
          if (socket.bufferedAmount + tcp.writableLength < HIGH_WATER_MARK) {
            socket.send(frame);
            return;
          }
          return new Promise<void>((resolve) => socket.send(frame, () => resolve()));
        },
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', async (message) => {
            try {
              await handle(String(message));
            } catch (error) {
              socket.close(CloseCode.InternalServerError, reasonOf(error));
            }
          }),
      },
      { socket, request } as WsExtra & E,
    );

    socket.once('close', (code, reason) => {
      clearTimeout(pongWait);
      clearInterval(ping);
      void closed(code, String(reason));
    });
  });

  return {
    async dispose() {
      // 1001 Going Away: the client may reconnect (to another instance) and resume from its last seq.
      const open = [...wss.clients];
      for (const client of open) client.close(1001, 'Server shutting down; reconnect to resume');
      // A client that never answers the close handshake must not hold the shutdown.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, CLOSE_HANDSHAKE_MS);
        const check = () => {
          if (open.every((client) => client.readyState === client.CLOSED)) {
            clearTimeout(timer);
            resolve();
          }
        };
        for (const client of open) client.once('close', check);
        check();
      });
      for (const client of open) if (client.readyState !== client.CLOSED) client.terminate();
      wss.removeAllListeners();
    },
  };
}
