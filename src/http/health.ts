import type { FastifyInstance, onSendHookHandler } from 'fastify';
import type { DependencyHealth } from '../health/dependency-health.js';
import { ReadinessWatch } from '../health/readiness-watch.js';

/** How long the server took over a /readyz answer (`Server-Timing: app;dur=<ms>`), so a probe can tell its own queueing from ours. */
const serverTiming: onSendHookHandler = (_request, reply, payload, done) => {
  reply.header('server-timing', `app;dur=${reply.elapsedTime.toFixed(2)}`);
  done(null, payload);
};

/**
 * Liveness (the process answers) and readiness: not draining, and the database reachable and
 * writable. Readiness answers from memory, kept current by a background check (readiness-watch.ts),
 * never waiting on the database itself. Redis is reported but does not fail readiness: without it
 * limits count per process and event feeds poll, which is degraded, not down.
 */
export function registerHealthRoutes(app: FastifyInstance, health: DependencyHealth, isDraining: () => boolean): void {
  const watch = new ReadinessWatch(health);
  app.addHook('onReady', (done) => {
    watch.start();
    done();
  });
  app.addHook('onClose', (_app, done) => {
    watch.stop();
    done();
  });
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true }, onSend: serverTiming }, (_request, reply) => {
    const redis = health.redisState;
    const database = watch.database;
    if (isDraining()) return reply.code(503).send({ status: 'draining', database, redis });
    if (database !== 'up') return reply.code(503).send({ status: 'unavailable', database, redis });
    return reply.send({ status: redis === 'down' ? 'degraded' : 'ready', database, redis });
  });
}
