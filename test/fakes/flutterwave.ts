import { createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LocalHttpServer } from '../helpers/local-server.js';
import { MalformedAnswers } from './malformed.js';

/**
 * A local Flutterwave built from the documented shapes (shared/providers.md §1): the OAuth token
 * endpoint, v4 customers, payment methods (card fields AES-256-GCM encrypted with the dashboard key
 * and a 12-character nonce), charges with next_action, virtual accounts, banks, account resolution
 * and direct transfers, v3 Standard payment links, and signed webhooks. Magic values: card
 * 5531886652142950 needs PIN 3310 then OTP 12345, 4187427415564246 needs 3DS; account 2000000000
 * resolves with HTTP 200 and an error body; transfers to 0000000000 fail, to 9999999999 answer 503
 * but go through. `malformed` spoils chosen 2xx answers (malformed.ts).
 */
export class FakeFlutterwave extends LocalHttpServer {
  readonly clientId = 'fake-client';
  readonly clientSecret = 'fake-secret';
  readonly encryptionKey = randomBytes(32).toString('base64');
  readonly secretHash = 'fake-secret-hash';
  readonly v3SecretKey = 'FLWSECK_TEST-fake';
  readonly charges = new Map<string, Record<string, any>>();
  readonly transfers = new Map<string, Record<string, any>>();
  readonly requests: Array<{ method: string; path: string; body: any; headers: Record<string, unknown> }> = [];
  tokensIssued = 0;
  /** Bill payments by the reference the gateway sent. */
  readonly bills = new Map<string, Record<string, any>>();
  /** Which bill-status path answers: Node-v3's `/bills/{ref}` or the other description's `/bills/{ref}/status`. */
  billStatusPath: 'plain' | 'suffixed' = 'plain';
  private readonly methods = new Map<string, { number?: string; scenario: string }>();
  /** Every transfer as the v3 list shows it (a payout sent twice is two rows under one reference). */
  readonly transferLog: Array<Record<string, any>> = [];
  /** Settlements as `GET /v3/settlements/:id` shows them (the list shows them without `transactions`). */
  readonly settlements: Array<Record<string, any>> = [];
  /** Rows per page of the v3 lists (`/v3/transactions`, `/v3/transfers`, `/v3/bills`). */
  v3PageSize = 10;
  /** 2xx answers sent in another shape than the documented one, by method and path. */
  readonly malformed = new MalformedAnswers();

  /** A transfer arrives into a virtual account: a succeeded charge the gateway can look up. */
  addCharge(reference: string, status = 'succeeded', amount = 0, createdAt = new Date()): string {
    const id = `chg_${randomBytes(6).toString('hex')}`;
    this.charges.set(id, { id, reference, status, amount, currency: 'NGN', created_at: createdAt.toISOString() });
    return id;
  }

  /** A transfer in the provider's books (naira amount, v3 status such as SUCCESSFUL or FAILED). */
  addTransfer(reference: string, amount: number, status = 'SUCCESSFUL', createdAt = new Date()): string {
    const id = `trf_${randomBytes(6).toString('hex')}`;
    this.transferLog.push({
      id,
      reference,
      amount,
      fee: 10.75,
      currency: 'NGN',
      status,
      created_at: createdAt.toISOString(),
    });
    return id;
  }

  /**
   * A settlement of collections (naira amounts, as v3 shows them): `net_amount` is their charged
   * amounts less their fees unless given.
   */
  addSettlement(
    transactions: Array<{ txRef: string; id?: number | string; amount: number; fee?: number }>,
    createdAt: Date,
    netAmount?: number,
  ): string {
    const id = 40_000 + this.settlements.length;
    const rows = transactions.map((t, i) => ({
      id: t.id ?? id * 100 + i,
      tx_ref: t.txRef,
      flw_ref: `FLW-${id}-${i}`,
      charged_amount: t.amount,
      app_fee: t.fee ?? 0,
      merchant_fee: 0,
      stampduty_charge: 0,
      settlement_amount: t.amount - (t.fee ?? 0),
      status: 'successful',
      currency: 'NGN',
    }));
    const gross = rows.reduce((sum, r) => sum + r.charged_amount, 0);
    const fees = rows.reduce((sum, r) => sum + r.app_fee, 0);
    this.settlements.push({
      id,
      status: 'completed',
      currency: 'NGN',
      gross_amount: gross,
      app_fee: fees,
      merchant_fee: 0,
      chargeback: 0,
      refund: 0,
      stampduty_charge: 0,
      net_amount: netAmount ?? Math.round((gross - fees) * 100) / 100,
      transaction_count: rows.length,
      meta: rows.map((r) => r.id),
      created_at: createdAt.toISOString(),
      transactions: rows,
    });
    return String(id);
  }

  /**
   * The v3 lists as documented: `{status, message, meta: {page_info: {total, current_page,
   * total_pages}}, data: [...]}`, newest first, filtered by `from`/`to` days.
   */
  private v3List(rows: Array<Record<string, any>>, url: URL, send: (status: number, payload: object) => void) {
    const from = url.searchParams.get('from');
    const to = url.searchParams.get('to');
    const day = (row: Record<string, any>) => String(row['created_at']).slice(0, 10);
    const kept = rows
      .filter((r) => (!from || day(r) >= from) && (!to || day(r) <= to))
      .sort((a, b) => String(b['created_at']).localeCompare(String(a['created_at'])));
    const page = Number(url.searchParams.get('page') ?? 1);
    const size = this.v3PageSize;
    send(200, {
      status: 'success',
      message: 'Fetched',
      meta: {
        page_info: { total: kept.length, current_page: page, total_pages: Math.max(1, Math.ceil(kept.length / size)) },
      },
      data: kept.slice((page - 1) * size, page * size),
    });
  }

  /** POSTs a webhook to the gateway, signed as v4 does (base64 HMAC-SHA-256 with the secret hash). */
  notify(target: string, payload: object, secret = this.secretHash): Promise<Response> {
    const body = JSON.stringify(payload);
    return fetch(`${target}/webhooks/flutterwave`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'flutterwave-signature': createHmac('sha256', secret).update(body).digest('base64'),
      },
      body,
    });
  }

  /** A v3 bills notice, authenticated the v3 way: `verif-hash` equal to the secret hash. */
  notifyBill(target: string, reference: string, hash = this.secretHash): Promise<Response> {
    const bill = this.bills.get(reference)!;
    return fetch(`${target}/webhooks/flutterwave`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'verif-hash': hash },
      body: JSON.stringify({
        event: 'singlebillpayment.status',
        'event.type': 'SingleBillPayment',
        data: {
          customer: bill['customer'],
          amount: bill['amount'],
          tx_ref: bill['tx_ref'],
          customer_reference: reference,
          status: 'success',
          reference: null,
        },
      }),
    });
  }

  private handleBills(method: string, url: URL, body: any, send: (status: number, payload: object) => void): void {
    const ok = (data: unknown) => send(200, { status: 'success', message: 'OK', data });
    if (!/^Bearer FLWSECK_TEST-fake$/.test(String(this.lastAuth)))
      return send(401, { status: 'error', message: 'Invalid authorization key', data: null });
    const parts = url.pathname.split('/').filter(Boolean).slice(1);
    if (method === 'GET' && parts[0] === 'transactions' && !parts[1]) {
      const v3Status = (s: string) => (s === 'succeeded' ? 'successful' : s === 'failed' ? 'failed' : 'pending');
      const rows = [...this.charges.values()].map((c) => ({
        id: c['id'],
        tx_ref: c['reference'],
        flw_ref: `FLW-${c['id']}`,
        amount: c['amount'],
        currency: c['currency'] ?? 'NGN',
        status: v3Status(String(c['status']).toLowerCase()),
        created_at: c['created_at'] ?? new Date().toISOString(),
      }));
      return this.v3List(rows, url, send);
    }
    if (method === 'GET' && parts[0] === 'transfers' && !parts[1]) return this.v3List(this.transferLog, url, send);
    if (method === 'GET' && parts[0] === 'settlements' && !parts[1])
      return this.v3List(
        this.settlements.map(({ transactions: _t, ...s }) => s),
        url,
        send,
      );
    if (method === 'GET' && parts[0] === 'settlements' && parts[1]) {
      const found = this.settlements.find((s) => String(s['id']) === parts[1]);
      return found
        ? send(200, { status: 'success', message: 'Settlement fetched', data: found })
        : send(404, { status: 'error', message: 'Settlement not found', data: null });
    }
    if (method === 'GET' && parts[0] === 'bills' && !parts[1]) {
      const rows = [...this.bills.entries()].map(([reference, b]) => ({
        customer_reference: reference,
        tx_ref: b['tx_ref'],
        amount: b['amount'],
        status: b['status'] === 'success' ? 'successful' : b['status'],
        created_at: b['created_at'] ?? new Date().toISOString(),
      }));
      return this.v3List(rows, url, send);
    }
    if (method === 'GET' && parts[0] === 'top-bill-categories') {
      return ok([
        { id: 1, name: 'Airtime', code: 'AIRTIME', description: 'Airtime', country_code: 'NG' },
        { id: 2, name: 'Electricity', code: 'UTILITYBILLS', description: 'Power', country_code: 'NG' },
        { id: 3, name: 'Internet', code: 'INTSERVICE', description: 'Not a seed category', country_code: 'NG' },
      ]);
    }
    if (method === 'GET' && parts[0] === 'bills' && parts[2] === 'billers') {
      if (parts[1] === 'AIRTIME')
        return ok([{ id: 1, name: 'MTN', biller_code: 'BIL099', short_name: 'MTN', country_code: 'NG' }]);
      if (parts[1] === 'UTILITYBILLS')
        return ok([{ id: 2, name: 'IKEDC PREPAID', biller_code: 'BIL112', short_name: 'IKEDC', country_code: 'NG' }]);
      return ok([]);
    }
    if (method === 'GET' && parts[0] === 'billers' && parts[2] === 'items') {
      if (parts[1] === 'BIL099')
        return ok([
          {
            id: 1,
            biller_code: 'BIL099',
            name: 'MTN VTU',
            item_code: 'AT099',
            short_name: 'MTN',
            fee: 0,
            label_name: 'Mobile Number',
            amount: 0,
          },
        ]);
      if (parts[1] === 'BIL112')
        return ok([
          {
            id: 2,
            biller_code: 'BIL112',
            name: 'IKEDC PREPAID',
            item_code: 'UB157',
            short_name: 'IKEDC',
            fee: 100,
            label_name: 'Meter Number',
            amount: 0,
          },
        ]);
      return send(404, { status: 'error', message: 'Biller not found', data: null });
    }
    if (method === 'GET' && parts[0] === 'bill-items' && parts[2] === 'validate') {
      const customer = url.searchParams.get('customer');
      // The documented gotcha: an invalid customer answers HTTP 200 with an error body.
      if (customer === '00000000000')
        return send(200, { status: 'error', message: 'Invalid customer number', data: null });
      return ok({
        response_code: '00',
        response_message: 'Successful',
        name: 'TUNDE BAKARE',
        biller_code: url.searchParams.get('code'),
        customer,
        minimum: 100,
        maximum: 100000,
        address: '1 Broad St',
      });
    }
    if (method === 'POST' && parts[0] === 'billers' && parts[4] === 'payment') {
      if (body.customer_id === '08000000001')
        return send(400, { status: 'error', message: 'Transaction failed at biller', data: null });
      const bill = {
        phone_number: body.customer_id,
        customer: body.customer_id,
        amount: body.amount,
        network: 'MTN',
        code: '200',
        tx_ref: `CF-FLYAPI-${Math.floor(Math.random() * 1e9)}`,
        reference: body.reference,
        ...(parts[1] === 'BIL112' ? { recharge_token: '1234-5678-9012-3456-7890', units: '40.0 kWh' } : {}),
        status: body.customer_id === '08000000009' ? 'pending' : 'success',
        created_at: new Date().toISOString(),
      };
      this.bills.set(body.reference, bill);
      if (body.customer_id === '08000000009')
        return send(504, { status: 'error', message: 'Gateway timeout', data: null });
      const { status: _status, created_at: _at, ...answer } = bill;
      return ok({ ...answer, status: 'success' });
    }
    if (method === 'GET' && parts[0] === 'bills' && parts[1]) {
      const suffixed = parts[2] === 'status';
      if ((this.billStatusPath === 'suffixed') !== suffixed)
        return send(404, { status: 'error', message: 'Not found', data: null });
      const bill = this.bills.get(parts[1]);
      if (!bill) return send(404, { status: 'error', message: 'Bill not found', data: null });
      return ok({
        currency: 'NGN',
        customer_id: bill['customer'],
        amount: `${bill['amount']}.0000`,
        product: 'AIRTIME',
        tx_ref: bill['tx_ref'],
        extra: bill['recharge_token'] ?? null,
        status: bill['status'],
      });
    }
    send(404, { status: 'error', message: `No route ${method} ${url.pathname}`, data: null });
  }

  private lastAuth: unknown;

  private decrypt(value: string, nonce: string): string {
    const data = Buffer.from(value, 'base64');
    const decipher = createDecipheriv(
      'aes-256-gcm',
      Buffer.from(this.encryptionKey, 'base64'),
      Buffer.from(nonce, 'utf8'),
    );
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8');
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url!, 'http://x');
    const send = (status: number, payload: object) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      const body = status < 300 ? this.malformed.apply(req.method!, url.pathname + url.search, payload) : payload;
      res.end(JSON.stringify(body) ?? '');
    };
    const ok = (data: unknown, status = 200) => send(status, { status: 'success', message: 'OK', data });
    const fail = (status: number, message: string, field?: string) =>
      send(status, {
        status: 'failed',
        error: {
          type: 'REQUEST_NOT_VALID',
          code: '10400',
          message,
          ...(field ? { validation_errors: [{ field_name: field, message }] } : {}),
        },
      });

    if (url.pathname === '/token') {
      const form = new URLSearchParams(text);
      if (
        form.get('client_id') !== this.clientId ||
        form.get('client_secret') !== this.clientSecret ||
        form.get('grant_type') !== 'client_credentials'
      ) {
        return send(401, { error: 'invalid_client' });
      }
      this.tokensIssued++;
      return send(200, {
        access_token: `tok_${this.tokensIssued}`,
        expires_in: 600,
        refresh_expires_in: 0,
        token_type: 'Bearer',
        scope: 'profile',
      });
    }
    const body = text ? JSON.parse(text) : undefined;
    this.lastAuth = req.headers.authorization;
    this.requests.push({ method: req.method!, path: url.pathname + url.search, body, headers: req.headers });

    if (url.pathname.startsWith('/v3/') && url.pathname !== '/v3/payments')
      return this.handleBills(req.method!, url, body, send);
    if (url.pathname === '/v3/payments') {
      if (req.headers.authorization !== `Bearer ${this.v3SecretKey}`)
        return send(401, { status: 'error', message: 'Invalid authorization key', data: null });
      return send(200, {
        status: 'success',
        message: 'Hosted Link',
        data: { link: `https://checkout.flutterwave.test/pay/${body.tx_ref}` },
      });
    }
    if (!/^Bearer tok_\d+$/.test(String(req.headers.authorization))) return fail(401, 'Invalid token');
    const v4 = url.pathname.replace(/^\/v4/, '');
    const parts = v4.split('/').filter(Boolean);

    if (req.method === 'POST' && v4 === '/customers') {
      if (!body?.email) return fail(400, 'email is required', 'email');
      return ok({ id: `cus_${Buffer.from(body.email).toString('hex').slice(0, 12)}`, email: body.email }, 201);
    }
    if (req.method === 'POST' && v4 === '/payment-methods') {
      const id = `pmd_${randomBytes(6).toString('hex')}`;
      if (body.type === 'ussd') {
        this.methods.set(id, { scenario: 'ussd' });
        return ok({ id, type: 'ussd' }, 201);
      }
      const card = body.card;
      let number: string;
      try {
        number = this.decrypt(card.encrypted_card_number, card.nonce);
        this.decrypt(card.encrypted_cvv, card.nonce);
      } catch {
        return fail(400, 'Card details could not be decrypted', 'encrypted_card_number');
      }
      if (!/^\d{13,19}$/.test(number) || number === '1234567812345678')
        return fail(400, 'Invalid card number', 'card_number');
      const scenario =
        number === '5531886652142950' ? 'pinThenOtp' : number === '4187427415564246' ? 'threeDs' : 'noAuth';
      this.methods.set(id, { number, scenario });
      return ok(
        {
          id,
          type: 'card',
          card: {
            last4: number.slice(-4),
            network: number.startsWith('4') ? 'VISA' : 'MASTERCARD',
            expiry_month: this.decrypt(card.encrypted_expiry_month, card.nonce),
            expiry_year: this.decrypt(card.encrypted_expiry_year, card.nonce),
          },
        },
        201,
      );
    }
    if (req.method === 'POST' && v4 === '/charges') {
      const method = this.methods.get(body.payment_method_id);
      if (!method) return fail(400, 'Payment method not found', 'payment_method_id');
      const id = `chg_${randomBytes(6).toString('hex')}`;
      const charge: Record<string, any> = {
        id,
        reference: body.reference,
        amount: body.amount,
        currency: body.currency,
        status: 'pending',
        created_at: new Date().toISOString(),
      };
      if (method.scenario === 'pinThenOtp') charge['next_action'] = { type: 'requires_pin', requires_pin: {} };
      else if (method.scenario === 'threeDs')
        charge['next_action'] = { type: 'redirect_url', redirect_url: { url: `https://3ds.flutterwave.test/${id}` } };
      else if (method.scenario === 'ussd')
        charge['next_action'] = { type: 'payment_instruction', payment_instruction: { note: 'Dial *889*767*1234#' } };
      else charge['status'] = 'succeeded';
      this.charges.set(id, charge);
      return ok(charge, 201);
    }
    if (parts[0] === 'charges' && parts[1]) {
      const charge = this.charges.get(parts[1]);
      if (!charge) return fail(404, 'Charge not found');
      if (req.method === 'PUT') {
        const auth = body.authorization;
        if (auth.type === 'pin') {
          const pin = this.decrypt(auth.pin.encrypted_pin, auth.pin.nonce);
          if (pin === '3310') charge['next_action'] = { type: 'requires_otp', requires_otp: { note: 'Enter the OTP' } };
          else {
            charge['status'] = 'failed';
            delete charge['next_action'];
          }
        } else if (auth.type === 'otp') {
          charge['status'] = auth.otp.code === '12345' ? 'succeeded' : 'failed';
          delete charge['next_action'];
        }
      }
      return ok(charge);
    }
    if (req.method === 'POST' && v4 === '/virtual-accounts') {
      return ok(
        {
          id: `va_${randomBytes(6).toString('hex')}`,
          account_number: `77${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`,
          account_bank_name: 'Wema Bank',
          account_type: body.account_type,
          reference: body.reference,
          account_expiration_datetime:
            body.account_type === 'dynamic' ? new Date(Date.now() + 1_800_000).toISOString() : null,
          note: `Pay into Wema Bank for ${body.reference}`,
        },
        201,
      );
    }
    if (req.method === 'GET' && v4 === '/banks') {
      return ok([
        { id: 1, code: '044', name: 'Access Bank' },
        { id: 2, code: '058', name: 'Guaranty Trust Bank' },
      ]);
    }
    if (req.method === 'POST' && v4 === '/banks/account-resolve') {
      // Flutterwave has answered HTTP 200 with an error body: the gateway must read the body.
      if (body.account.number === '2000000000')
        return send(200, {
          status: 'failed',
          error: {
            message: 'Account could not be resolved',
            validation_errors: [{ field_name: 'account_number', message: 'Account could not be resolved' }],
          },
        });
      return ok({ account_number: body.account.number, account_name: 'Alexis Sanchez', bank_code: body.account.code });
    }
    if (req.method === 'POST' && v4 === '/direct-transfers') {
      const number = body.payment_instruction.recipient.bank.account_number;
      const transfer = {
        id: `trf_${randomBytes(6).toString('hex')}`,
        reference: body.reference,
        status: number === '0000000000' ? 'FAILED' : 'SUCCEEDED',
      };
      this.transfers.set(body.reference, transfer);
      this.transferLog.push({
        ...transfer,
        amount: body.payment_instruction.amount.value,
        currency: 'NGN',
        status: transfer.status === 'FAILED' ? 'FAILED' : 'SUCCESSFUL',
        created_at: new Date().toISOString(),
      });
      if (number === '9999999999') return send(503, { status: 'failed', error: { message: 'Upstream timeout' } });
      return ok(transfer, 201);
    }
    if (req.method === 'GET' && v4 === '/transfers') {
      const transfer = this.transfers.get(url.searchParams.get('reference') ?? '');
      return ok(transfer ? [transfer] : []);
    }
    fail(404, `No route ${req.method} ${v4}`);
  }
}
