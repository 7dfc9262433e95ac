import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on a free 127.0.0.1 port for tests: webhook receivers and the providers'
 * fakes extend it and answer in `handle`. `url` is its origin once started.
 */
export abstract class LocalHttpServer {
  url = '';
  private server: Server | undefined;

  protected abstract handle(req: IncomingMessage, res: ServerResponse): void | Promise<void>;

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
