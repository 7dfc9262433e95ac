import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** One request as its bytes reached the upstream, split where HTTP/1.1 splits it. */
export interface RecordedRequest {
  /** `POST /api/v1/bills/validate HTTP/1.1` */
  requestLine: string;
  /** Each header line as received, in order, name as sent. */
  headerLines: string[];
  /** Lower-cased name → value (the last of repeated names). */
  headers: Record<string, string>;
  body: Buffer;
  /** Every byte received for this request. */
  raw: Buffer;
}

/**
 * An upstream that records the exact bytes of each request it receives and answers fixed bytes
 * (`answer`), or nothing at all for the paths in `silentOn` (a POST left hanging until the facade's
 * deadline). A plain TCP server, so nothing between the wire and the record parses or rewrites it.
 */
export class RecordingUpstream {
  url = '';
  readonly received: RecordedRequest[] = [];
  /** The answer's bytes, whole (status line, headers, blank line, body). */
  answer: Buffer = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
  /** Request paths (without query) that get no answer. */
  readonly silentOn = new Set<string>();
  /**
   * When set, the answer's first `splitAt` bytes are written at once and the rest only at
   * `finishAnswer()`: the caller can see whether the facade streams what it has.
   */
  splitAt: number | undefined;
  private unfinished: (() => void) | undefined;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  async start(): Promise<this> {
    this.server = createServer((socket) => this.serve(socket));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  finishAnswer(): void {
    this.unfinished?.();
    this.unfinished = undefined;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      // Keep-alive: several requests may arrive on one connection, one after another.
      for (;;) {
        const request = takeRequest(pending);
        if (!request) return;
        pending = pending.subarray(request.raw.length);
        this.received.push(request);
        const path = request.requestLine.split(' ')[1]!.split('?')[0]!;
        if ([...this.silentOn].some((silent) => path.endsWith(silent))) continue;
        if (this.splitAt === undefined) socket.write(this.answer);
        else {
          const answer = this.answer;
          socket.write(answer.subarray(0, this.splitAt));
          this.unfinished = () => socket.write(answer.subarray(this.splitAt));
        }
      }
    });
  }
}

/** The first whole request in `bytes` (headers and a Content-Length body), or undefined while it is incomplete. */
function takeRequest(bytes: Buffer): RecordedRequest | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [requestLine = '', ...headerLines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  if (headers['transfer-encoding']) throw new Error('the facade sent a chunked body; it sends a Content-Length');
  const length = Number(headers['content-length'] ?? 0);
  if (bytes.length < end + 4 + length) return undefined;
  const raw = bytes.subarray(0, end + 4 + length);
  return { requestLine, headerLines, headers, body: raw.subarray(end + 4), raw: Buffer.from(raw) };
}

/** A fixed HTTP/1.1 answer as bytes: status line, the header lines given, Content-Length, body. */
export function answerBytes(status: string, headerLines: string[], body: string): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  const head = [`HTTP/1.1 ${status}`, ...headerLines, `content-length: ${bytes.length}`].join('\r\n');
  return Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), bytes]);
}
