import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { LocalHttpServer } from './local-server.js';
import { waitUntil } from './wait.js';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real local HTTP server standing in for a partner's webhook receiver. `answer` decides each
 * response (status, and optionally never answering at all, or a callback before answering).
 */
export class Receiver extends LocalHttpServer {
  readonly received: Received[] = [];
  answer: (request: Received) => number | 'hang' | Promise<number | 'hang'> = () => 200;

  override async start(): Promise<this> {
    await super.start();
    this.url = `${this.url}/hooks`;
    return this;
  }

  protected handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      this.received.push(received);
      const status = await this.answer(received);
      if (status === 'hang') return;
      res.writeHead(status, status >= 300 && status < 400 ? { location: 'http://127.0.0.1:1/elsewhere' } : {});
      res.end(status < 300 ? 'ok' : `status ${status}`);
    });
  }

  async waitFor(count: number, timeoutMs = 10_000): Promise<void> {
    try {
      await waitUntil(() => this.received.length >= count, timeoutMs);
    } catch {
      throw new Error(`Receiver got ${this.received.length} of ${count} requests`);
    }
  }
}
