import type { FastifyInstance } from 'fastify';
import { INBOUND_PATH, type InboundWebhooks } from '../domain/facade/inbound-webhooks.js';

/** The largest upstream webhook body taken: an envelope is a few hundred bytes. */
const INBOUND_BODY_LIMIT = 256 * 1024;

/**
 * `POST /webhooks/upstream/:id`: where the upstream delivers one partner account's webhooks
 * (docs/facade.md#events-per-partner). The body is read as bytes, whatever its type, since the
 * signature covers exactly those; the answer (200, or 401 when the signature does not match, or
 * 400 naming the field of an envelope not in the spec's shape) comes once the event is written,
 * a single insert, well inside the spec's 10 s.
 */
export function registerInboundWebhooks(app: FastifyInstance, inbound: InboundWebhooks): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post<{ Params: { id: string } }>(
      `${INBOUND_PATH}/:id`,
      { bodyLimit: INBOUND_BODY_LIMIT },
      async (request, reply) => {
        const header = (name: string) => {
          const value = request.headers[name];
          return typeof value === 'string' ? value : undefined;
        };
        // `-next`: this gateway, as an upstream rotating its secret, signs with the new one there
        // while `x-service-signature` keeps the old one (webhooks/signing.ts).
        const outcome = await inbound.receive(
          request.params.id,
          Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          [header('x-service-signature'), header('x-service-signature-next')],
        );
        return reply.code(200).send({ received: true, duplicate: !outcome.stored });
      },
    );
  });
}
