import type { FastifyInstance } from 'fastify';
import { DomainError } from '../domain/errors.js';
import { paycrestStatus, verifyPaycrestSignature } from '../domain/offramp/paycrest-provider.js';
import type { Services } from '../services.js';

interface PaycrestNotice {
  event?: string;
  data?: { id?: string; status?: string; txHash?: string };
}

/**
 * `POST /webhooks/paycrest`: Paycrest's order notices drive production offramp orders. The
 * signature (`X-Paycrest-Signature`, hex HMAC-SHA-256 of the raw body with the API secret) is
 * checked on the exact bytes received, before anything is parsed. The event name, not
 * `data.status`, decides the change (Paycrest's advice: `compliance_hold` keeps status `pending`).
 * Repeats and late notices change nothing: the lifecycle only moves forward.
 */
export function registerPaycrestWebhook(app: FastifyInstance, services: Services): void {
  void app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post('/webhooks/paycrest', { bodyLimit: 256 * 1024 }, async (request, reply) => {
      const paycrest = services.paycrest;
      if (!paycrest) throw new DomainError('NOT_FOUND', 'Cannot POST /webhooks/paycrest');
      const raw = request.body as Buffer;
      const signature = request.headers['x-paycrest-signature'];
      if (!verifyPaycrestSignature(raw, typeof signature === 'string' ? signature : undefined, services.config.PAYCREST_API_SECRET ?? '')) {
        throw new DomainError('UNAUTHENTICATED', 'The X-Paycrest-Signature header does not match the body.');
      }
      let notice: PaycrestNotice;
      try {
        notice = JSON.parse(raw.toString('utf8')) as PaycrestNotice;
      } catch {
        throw new DomainError('BAD_USER_INPUT', 'The body is not valid JSON.', { field: 'body' });
      }
      const status = paycrestStatus((notice.event ?? '').replace(/^payment_order\./, ''));
      const orderId = notice.data?.id;
      const order = orderId ? await services.offramp.findByProviderOrder(paycrest.name, orderId) : undefined;
      if (status && order) {
        const { changed } = await services.offramp.move(order.id, {
          status,
          ...(notice.data?.txHash ? { txHash: notice.data.txHash } : {}),
          ...(status === 'refunded' || status === 'expired' || status === 'failed' ? { reason: `Paycrest reported ${notice.event}.` } : {}),
        });
        request.log.info({ providerOrderId: orderId, event: notice.event, changed }, 'paycrest notice');
      } else {
        request.log.info({ providerOrderId: orderId, event: notice.event }, 'paycrest notice ignored (no status change or unknown order)');
      }
      return reply.code(200).send({ received: true });
    });
  });
}
