import type { Server } from 'node:http';

/** How long idle connections may still deliver a request after the listener closed. */
const IDLE_LINGER_MS = 1_000;

/**
 * Closes the listener (`close` is the app's close) without cutting a request already on its way.
 * Node's `server.close()` at once destroys every connection with no request in progress,
 * including one just accepted whose request is still in the socket buffer; that sweep is deferred
 * here: idle connections get IDLE_LINGER_MS to deliver what they already sent. Connections with a
 * request in progress are never cut: the server waits for their responses, which say
 * `Connection: close` while draining.
 *
 * What no server can save: a handshake the kernel completed into the listen backlog in the last
 * instant before the socket closes is reset with it. The readiness window before this step is
 * what keeps those away: a load balancer has stopped sending by then.
 */
export async function stopListening(server: Server, close: () => Promise<void>): Promise<void> {
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => undefined;
  let timer: NodeJS.Timeout | undefined;
  const sweep = () => {
    closeIdle();
    timer = setTimeout(sweep, 100);
  };
  timer = setTimeout(sweep, IDLE_LINGER_MS);
  try {
    await close();
  } finally {
    clearTimeout(timer);
  }
}
