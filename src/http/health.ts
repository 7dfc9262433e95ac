import type { FastifyInstance } from 'fastify';
import type { DependencyHealth } from '../health/dependency-health.js';

/**
 * Liveness (the process answers) and readiness: not draining, and the database reachable and
 * writable. Redis is reported but does not fail readiness: without it limits count per process
 * and event feeds poll, which is degraded, not down.
 */
export function registerHealthRoutes(app: FastifyInstance, health: DependencyHealth, isDraining: () => boolean): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const redis = health.redisState;
    if (isDraining()) return reply.code(503).send({ status: 'draining', database: health.databaseState, redis });
    const database = await health.checkDatabase().catch(() => 'down' as const);
    if (database !== 'up') return reply.code(503).send({ status: 'unavailable', database, redis });
    return { status: redis === 'down' ? 'degraded' : 'ready', database, redis };
  });
}
