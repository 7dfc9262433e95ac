import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LocalHttpServer } from '../helpers/local-server.js';

/**
 * A REST v1 deployment written from the spec alone (partner-gateway-api.md): only its paths, its
 * envelope, its user resource and its error bodies, nothing of this gateway's code. It misbehaves
 * on command, for every request until told otherwise:
 * - `timeout`: reads the request and never answers;
 * - `slow`: holds each answer until `release()`;
 * - `server-error`: 500 in the general error body;
 * - `rate-limit`: 429 with `Retry-After: 7` and the rate-limit body;
 * - `forbidden`, `not-found`: 403, 404 in the general error body;
 * - `wrong-shape`: 200 whose `data` is not the user resource (an id that is a number, no email).
 */
export type Misbehaviour =
  | 'timeout'
  | 'slow'
  | 'server-error'
  | 'rate-limit'
  | 'forbidden'
  | 'not-found'
  | 'wrong-shape';

/** The spec's user resource, every field as it lists them. */
export interface SpecUser {
  id: string;
  createdAt: string;
  updatedAt: string;
  deletedDate: string;
  email: string;
  phone: string;
  firstName: string;
  lastName: string;
  name: string;
  haveTransactionPin: boolean;
  verified: boolean;
  resetToken: string;
  resetTokenExpiry: number;
  dob: string;
  isAdmin: boolean;
  deviceId: string;
  deviceIp: string;
  deviceModel: string;
  platform: string;
  lastLoggedIn: string;
}

/** The spec's paths (Endpoints), as patterns over the path without its query. */
const SPEC_PATHS: Array<[string, RegExp]> = [
  ['GET', /^\/api\/v1$/],
  ['GET', /^\/api\/v1\/user\/me$/],
  ['POST', /^\/api\/v1\/wallet\/deposit\/payment-method$/],
  ['POST', /^\/api\/v1\/bills\/pay\/(electricity|airtime)$/],
  ['POST', /^\/api\/v1\/bills\/(buy-airtime|validate)$/],
  ['GET', /^\/api\/v1\/bills\/records$/],
  ['GET', /^\/api\/v1\/bills\/records\/reference\/[^/]+$/],
  ['GET', /^\/api\/v1\/solana-exchange\/quote\/token-to-(sol|token)$/],
  ['POST', /^\/api\/v1\/solana-exchange\/swap-token-to-sol$/],
  ['POST', /^\/api\/v1\/solana\/transfer-token$/],
  ['GET', /^\/api\/v1\/solana\/address$/],
  ['GET', /^\/api\/v1\/offramp\/exchange\/(quote|assets)$/],
  ['POST', /^\/api\/v1\/customers\/[^/]+$/],
];

const STATUS_NAMES: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  500: 'Internal Server Error',
};

export class SpecUpstream extends LocalHttpServer {
  misbehaviour: Misbehaviour | undefined;
  /** Requests received, by path (query left out). */
  readonly received: string[] = [];
  /** The X-Forwarded-For of each request, in the same order. */
  readonly forwardedFor: Array<string | undefined> = [];
  private readonly users = new Map<string, SpecUser>();
  private readonly held: Array<() => void> = [];
  private readonly hanging = new Set<ServerResponse>();

  /** A user and a fresh API key for it. */
  addUser(overrides: Partial<SpecUser> = {}): { key: string; user: SpecUser } {
    const key = `sk_live_${randomUUID().replaceAll('-', '')}`;
    const user: SpecUser = {
      id: randomUUID(),
      createdAt: '2026-01-05T09:30:00.000Z',
      updatedAt: '2026-02-01T12:00:00.000Z',
      deletedDate: '2026-03-01T00:00:00.000Z',
      email: 'chioma@example.ng',
      phone: '+2348031234567',
      firstName: 'Chioma',
      lastName: 'Eze',
      name: 'Chioma N. Eze',
      haveTransactionPin: true,
      verified: true,
      resetToken: 'reset-secret-never-shown',
      resetTokenExpiry: 1767225600,
      dob: '1994-04-12',
      isAdmin: false,
      deviceId: 'dev-1',
      deviceIp: '102.89.1.2',
      deviceModel: 'Pixel 8',
      platform: 'android',
      lastLoggedIn: '2026-02-01T11:59:00.000Z',
      ...overrides,
    };
    this.users.set(key, user);
    return { key, user };
  }

  /** Answers held by `slow`, waiting. */
  get waiting(): number {
    return this.held.length;
  }

  release(): void {
    for (const answer of this.held.splice(0)) answer();
  }

  override async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    await super.stop();
  }

  protected handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0]!;
    this.received.push(path);
    this.forwardedFor.push(req.headers['x-forwarded-for'] as string | undefined);
    req.resume();
    req.on('end', () => {
      if (this.misbehaviour === 'timeout') {
        this.hanging.add(res);
        return;
      }
      const answer = () => this.answer(req, res, path);
      if (this.misbehaviour === 'slow') this.held.push(answer);
      else answer();
    });
  }

  private answer(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (!SPEC_PATHS.some(([method, pattern]) => method === req.method && pattern.test(path)))
      return general(res, 404, `Cannot ${req.method} ${path}`);
    switch (this.misbehaviour) {
      case 'server-error':
        return general(res, 500, 'Internal server error');
      case 'rate-limit':
        return send(
          res,
          429,
          { statusCode: 429, message: 'ThrottlerException: Too Many Requests', retryAfter: 7 },
          {
            'retry-after': '7',
          },
        );
      case 'forbidden':
        return general(res, 403, 'Insufficient permissions');
      case 'not-found':
        return general(res, 404, 'User not found');
      default:
    }
    const key = req.headers['x-api-key'];
    const user = typeof key === 'string' ? this.users.get(key) : undefined;
    if (!user) return general(res, 401, 'Invalid API key');
    if (path === '/api/v1/user/me') {
      const data = this.misbehaviour === 'wrong-shape' ? { id: 42, firstName: user.firstName } : user;
      return send(res, 200, { statusCode: 200, message: 'User retrieved successfully', data, errors: {} });
    }
    if (path.startsWith('/api/v1/bills/records/reference/')) {
      const reference = decodeURIComponent(path.split('/').at(-1)!);
      return send(res, 404, { success: false, message: 'Bill not found', errorCode: 'BILL_NOT_FOUND', reference });
    }
    send(res, 200, { statusCode: 200, message: 'OK', data: {}, errors: {} });
  }
}

function general(res: ServerResponse, status: number, message: string): void {
  send(res, status, { statusCode: status, message, error: STATUS_NAMES[status] ?? 'Error' });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}
