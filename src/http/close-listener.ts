import type { Server } from 'node:http';

/** How long no request may arrive, on any connection, before idle keep-alive connections are closed. */
const QUIET_MS = 1_000;
const SWEEP_EVERY_MS = 100;

/**
 * Closes the listener without cutting a request already on its way: `close` is the app's close
 * (its hooks, then waiting for the connections), `closed` is told once no new connection is
 * accepted (responses then say `Connection: close`).
 *
 * The listening socket is closed first, before anything else of the shutdown runs, right after
 * the event loop accepted what was queued: the kernel resets the connections still in its accept
 * queue with the socket.
 *
 * Node's `server.close()` would at once destroy every keep-alive connection with no request in
 * progress. A client may be writing a request onto such a connection at that very moment (it was
 * told it may keep the connection for the keep-alive timeout); the request would be reset. So
 * idle connections stay open while requests keep arriving: a request that does arrive is answered
 * with `Connection: close`, and the connection closes after the response. Only once no request has
 * arrived on any connection for QUIET_MS (the clients, or the load balancer, have stopped sending)
 * are the remaining idle ones closed; the shutdown grace bounds the wait in any case. Connections
 * with a request in progress are never cut: the server waits for their responses.
 */
export async function stopListening(server: Server, close: () => Promise<void>, closed: () => void): Promise<void> {
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => undefined;
  let lastRequestAt = Date.now();
  const seen = () => {
    lastRequestAt = Date.now();
  };
  server.on('request', seen);
  // Stops accepting, in the check phase right after an I/O poll: the connections already in the
  // kernel's accept queue were just accepted (libuv accepts until the queue is empty), so the few
  // reset with the socket are those that arrive within that instant. The app's close calls
  // close again and waits for the connections to end.
  await new Promise((resolve) => setImmediate(resolve));
  server.close();
  closed();
  const sweep = setInterval(() => {
    if (Date.now() - lastRequestAt >= QUIET_MS) closeIdle();
  }, SWEEP_EVERY_MS);
  try {
    await close();
  } finally {
    clearInterval(sweep);
    server.off('request', seen);
  }
}
