import type { Server } from 'node:http';

/**
 * Node's `server.close()` stops listening and at once destroys every connection with no request
 * in progress, including one accepted a moment ago whose request is still in the socket buffer
 * (the client sees a reset though it sent before the listener closed). This defers that sweep:
 * idle connections get `lingerMs` to deliver what they already sent, and are closed after that.
 * Connections with a request in progress are never cut: the server waits for their responses,
 * which say `Connection: close` while draining.
 */
export function closeIdleConnectionsAfter(server: Server, lingerMs: number): void {
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => undefined;
  let timer: NodeJS.Timeout | undefined;
  const sweep = () => {
    closeIdle();
    timer = setTimeout(sweep, 100);
  };
  timer = setTimeout(sweep, lingerMs);
  server.once('close', () => clearTimeout(timer));
}
