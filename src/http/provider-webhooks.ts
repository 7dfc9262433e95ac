import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.js';
import { verifyFlutterwaveSignature } from '../domain/payments/flutterwave-provider.js';
import { paycrestStatus, verifyPaycrestSignature } from '../domain/offramp/paycrest-provider.js';
import type { Services } from '../services.js';

interface PaycrestNotice {
  event?: string;
  data?: { id?: string; status?: string; txHash?: string };
}

interface FlutterwaveNotice {
  type?: string;
  event?: string;
  data?: {
    id?: string | number;
    reference?: string | null;
    tx_ref?: string;
    status?: string;
    customer_reference?: string;
  };
}

type Handler = (request: FastifyRequest, raw: Buffer) => Promise<void>;

/**
 * Providers' webhooks. Each signature is checked on the exact bytes received, before anything is
 * parsed; a notice is then only a hint: the state applied comes from the provider's API (Flutterwave)
 * or moves an order only forward (Paycrest), so repeats and forgeries change nothing.
 */
export function registerProviderWebhooks(app: FastifyInstance, services: Services): void {
  void app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const route = (path: string, handle: Handler) =>
      scope.post(path, { bodyLimit: 256 * 1024 }, async (request, reply) => {
        await handle(request, request.body as Buffer);
        return reply.code(200).send({ received: true });
      });
    route('/webhooks/paycrest', (request, raw) => paycrest(services, request, raw));
    route('/webhooks/flutterwave', (request, raw) => flutterwave(services, request, raw));
  });
}

function parse<T>(raw: Buffer): T {
  try {
    return JSON.parse(raw.toString('utf8')) as T;
  } catch {
    throw new DomainError('BAD_USER_INPUT', 'The body is not valid JSON.', { field: 'body' });
  }
}

const header = (request: FastifyRequest, name: string) => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Paycrest: `X-Paycrest-Signature` (hex HMAC-SHA-256 with the API secret). The event name, not
 * `data.status`, decides the change (`compliance_hold` keeps status `pending`).
 */
async function paycrest(services: Services, request: FastifyRequest, raw: Buffer): Promise<void> {
  const provider = services.paycrest;
  if (!provider) throw new DomainError('NOT_FOUND', 'Cannot POST /webhooks/paycrest');
  if (
    !verifyPaycrestSignature(raw, header(request, 'x-paycrest-signature'), services.config.PAYCREST_API_SECRET ?? '')
  ) {
    throw new DomainError('UNAUTHENTICATED', 'The X-Paycrest-Signature header does not match the body.');
  }
  const notice = parse<PaycrestNotice>(raw);
  const status = paycrestStatus((notice.event ?? '').replace(/^payment_order\./, ''));
  const orderId = notice.data?.id;
  const order = orderId ? await services.offramp.findByProviderOrder(provider.name, orderId) : undefined;
  if (!status || !order) {
    request.log.info(
      { providerOrderId: orderId, event: notice.event },
      'paycrest notice ignored (no status change or unknown order)',
    );
    return;
  }
  const { changed } = await services.offramp.move(order.id, {
    status,
    ...(notice.data?.txHash ? { txHash: notice.data.txHash } : {}),
    ...(status === 'refunded' || status === 'expired' || status === 'failed'
      ? { reason: `Paycrest reported ${notice.event}.` }
      : {}),
  });
  request.log.info({ providerOrderId: orderId, event: notice.event, changed }, 'paycrest notice');
}

/**
 * Flutterwave: `flutterwave-signature` (v4) or `verif-hash` (v3), against the secret hash. A
 * charge notice settles its deposit and a transfer notice its payout, each from the state the
 * provider's API reports, never from the notice's body.
 */
async function flutterwave(services: Services, request: FastifyRequest, raw: Buffer): Promise<void> {
  const secretHash = services.config.FLUTTERWAVE_SECRET_HASH;
  if (!secretHash) throw new DomainError('NOT_FOUND', 'Cannot POST /webhooks/flutterwave');
  if (
    !verifyFlutterwaveSignature(
      raw,
      { signature: header(request, 'flutterwave-signature'), verifHash: header(request, 'verif-hash') },
      secretHash,
    )
  ) {
    throw new DomainError('UNAUTHENTICATED', 'The flutterwave-signature header does not match the body.');
  }
  const notice = parse<FlutterwaveNotice>(raw);
  const kind = notice.type ?? notice.event ?? '';
  const reference = notice.data?.reference ?? notice.data?.tx_ref ?? '';
  if (kind.startsWith('charge.')) {
    const deposit = await services.deposits.byProviderReference(reference);
    if (deposit && notice.data?.id !== undefined) {
      const state = await services.paymentsProvider(deposit.environment).chargeStatus(String(notice.data.id));
      const settled = await services.deposits.apply(deposit.id, state);
      request.log.info({ deposit: deposit.id, kind, status: settled.status }, 'flutterwave charge notice');
      return;
    }
  } else if (kind === 'singlebillpayment.status') {
    // v3 bills: the notice names the bill; its state is read back from the status endpoint.
    const bill = await services.bills.byProviderReference(
      'flutterwave',
      notice.data?.customer_reference ?? notice.data?.tx_ref ?? '',
    );
    if (bill) {
      const settled = await services.bills.poll(bill.id);
      request.log.info({ bill: bill.id, status: settled.status }, 'flutterwave bill notice');
      return;
    }
  } else if (kind.startsWith('transfer.')) {
    const payout = await services.payouts.byProviderReference(reference);
    if (payout) {
      const settled = await services.payouts.reconcile(payout.id);
      request.log.info({ payout: payout.id, kind, status: settled.status }, 'flutterwave transfer notice');
      return;
    }
  }
  request.log.info({ kind, reference }, 'flutterwave notice ignored (unknown kind or record)');
}
