import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LocalHttpServer } from '../helpers/local-server.js';
import { MalformedAnswers } from './malformed.js';

/**
 * A local Paycrest Sender API (v1) built from the documented shapes (shared/providers.md §3):
 * `API-Key` auth, the `{status, message, data}` envelope, rates as decimal strings, institutions,
 * account verification, sender orders, and signed `payment_order.*` webhooks. `malformed` spoils
 * chosen 2xx answers (malformed.ts).
 */
export class FakePaycrest extends LocalHttpServer {
  readonly apiKey = `pk_${randomUUID()}`;
  readonly apiSecret = `sk_${randomUUID()}`;
  readonly orders = new Map<string, Record<string, any>>();
  readonly requests: Array<{ method: string; url: string; body: any }> = [];
  /** Answer every call with 503 (an outage). */
  down = false;
  /** 2xx answers sent in another shape than the documented one, by method and path. */
  readonly malformed = new MalformedAnswers();

  /** Sends a signed webhook for an order, as Paycrest does, to the gateway at `target`. */
  async notify(
    target: string,
    orderId: string,
    event: string,
    options: { secret?: string; status?: string } = {},
  ): Promise<Response> {
    const order = this.orders.get(orderId)!;
    const status = options.status ?? event.replace('payment_order.', '');
    order['status'] = status;
    const body = JSON.stringify({
      event,
      webhookVersion: '1',
      data: { ...order, status, txHash: `0x${'ab'.repeat(32)}`, updatedAt: new Date().toISOString() },
    });
    const signature = createHmac('sha256', options.secret ?? this.apiSecret)
      .update(body)
      .digest('hex');
    return fetch(`${target}/webhooks/paycrest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-paycrest-signature': signature },
      body,
    });
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const url = new URL(req.url!, 'http://x');
    this.requests.push({ method: req.method!, url: req.url!, body });
    const send = (status: number, payload: object) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      const answer = status < 300 ? this.malformed.apply(req.method!, req.url!, payload) : payload;
      res.end(JSON.stringify(answer) ?? '');
    };
    const ok = (data: unknown, status = 200) => send(status, { status: 'success', message: 'OK', data });
    const fail = (status: number, message: string, data: unknown = null) =>
      send(status, { status: 'error', message, data });
    if (this.down) return fail(503, 'Service temporarily unavailable');
    if (req.headers['api-key'] !== this.apiKey) return fail(401, 'Invalid API key');

    const parts = url.pathname.split('/').filter(Boolean);
    if (req.method === 'GET' && url.pathname === '/v1/tokens') {
      return ok([
        {
          symbol: 'USDT',
          contractAddress: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
          decimals: 6,
          baseCurrency: 'USD',
          network: 'ethereum',
        },
        {
          symbol: 'USDC',
          contractAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
          decimals: 6,
          baseCurrency: 'USD',
          network: 'base',
        },
        {
          symbol: 'USDT',
          contractAddress: '0x55d398326f99059fF775485246999027B3197955',
          decimals: 18,
          baseCurrency: 'USD',
          network: 'bnb-smart-chain',
        },
        {
          symbol: 'cNGN',
          contractAddress: '0x46C85152bFe9f96829aA94755D9f915F9B10EF5F',
          decimals: 6,
          baseCurrency: 'NGN',
          network: 'base',
        },
        {
          symbol: 'USDT',
          contractAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
          decimals: 6,
          baseCurrency: 'USD',
          network: 'tron',
        },
      ]);
    }
    if (req.method === 'GET' && parts[0] === 'v1' && parts[1] === 'rates') {
      const [token, amount, fiat] = parts.slice(2);
      if (!['NGN', 'KES', 'UGX', 'TZS', 'GHS'].includes(fiat!))
        return fail(400, `Fiat currency ${fiat} is not supported`);
      if (token!.toUpperCase() === 'CNGN' && fiat !== 'NGN') return fail(400, 'cNGN can only be converted to NGN');
      if (!/^\d+(\.\d+)?$/.test(amount!) || Number(amount) <= 0) return fail(400, 'Invalid amount');
      if (Number(amount) > 100_000) return fail(404, 'No provider available for this amount');
      // Decimals JSON-encoded as strings, as the Go server's shopspring/decimal does.
      return ok(
        token!.toUpperCase() === 'CNGN' ? '1' : ({ NGN: '1585.5', KES: '128.9', GHS: '15.1' }[fiat!] ?? '1000'),
      );
    }
    if (req.method === 'GET' && parts[0] === 'v1' && parts[1] === 'institutions') {
      if (parts[2] !== 'NGN' && parts[2] !== 'KES') return ok([]);
      return ok(
        parts[2] === 'NGN'
          ? [
              { name: 'Guaranty Trust Bank', code: 'GTBINGLA', type: 'bank' },
              { name: 'Opay', code: 'OPAYNGPC', type: 'bank' },
            ]
          : [{ name: 'M-Pesa', code: 'SAFAKEPC', type: 'mobile_money' }],
      );
    }
    if (req.method === 'POST' && url.pathname === '/v1/verify-account') {
      if (!body?.institution || !body?.accountIdentifier)
        return fail(400, 'Failed to validate payload', [
          { field: 'accountIdentifier', message: 'This field is required' },
        ]);
      if (body.accountIdentifier === '1111111111')
        return fail(400, 'Account not found', [{ field: 'accountIdentifier', message: 'Account not found' }]);
      return ok(body.institution === 'SAFAKEPC' ? 'OK' : 'CHIDI OKAFOR');
    }
    if (req.method === 'POST' && url.pathname === '/v1/sender/orders') {
      const missing = ['amount', 'token', 'rate', 'network', 'recipient'].filter((f) => body?.[f] === undefined);
      if (missing.length)
        return fail(
          400,
          'Failed to validate payload',
          missing.map((field) => ({ field, message: 'This field is required' })),
        );
      const id = randomUUID();
      const order = {
        id,
        amount: String(body.amount),
        token: body.token,
        network: body.network,
        rate: String(body.rate),
        receiveAddress: `0x${randomBytes(20).toString('hex')}`,
        validUntil: new Date(Date.now() + 5 * 60_000).toISOString(),
        senderFee: '0',
        transactionFee: '0.5',
        reference: body.reference,
        recipient: body.recipient,
        status: 'initiated',
        createdAt: new Date().toISOString(),
      };
      this.orders.set(id, order);
      return ok(order, 201);
    }
    if (req.method === 'GET' && url.pathname === '/v1/sender/orders') {
      // The documented list: `{total, page, pageSize, orders}`, newest first.
      const page = Number(url.searchParams.get('page') ?? 1);
      const pageSize = Number(url.searchParams.get('pageSize') ?? 10);
      const all = [...this.orders.values()].sort((a, b) =>
        String(b['createdAt']).localeCompare(String(a['createdAt'])),
      );
      return ok({ total: all.length, page, pageSize, orders: all.slice((page - 1) * pageSize, page * pageSize) });
    }
    if (req.method === 'GET' && parts[0] === 'v1' && parts[1] === 'sender' && parts[2] === 'orders' && parts[3]) {
      const order = this.orders.get(parts[3]);
      return order ? ok({ ...order, txHash: null }) : fail(404, 'Order not found');
    }
    fail(404, 'Not found');
  }
}
