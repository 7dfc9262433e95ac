import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import pg from 'pg';
import { type Config, isProduction } from '../config.js';
import { poolsOf } from '../db/pool-routing.js';
import { safeEqual } from '../domain/auth/opaque-token.js';
import type { Services } from '../services.js';
import { createGaugeCollector } from './db-gauges.js';
import { registry } from './metrics.js';
import { readBulkheads, readUpstreamFaults, readUpstreamRefusals } from './provider-gauges.js';

/**
 * Prometheus text at /metrics, in one of three ways:
 * - METRICS_PORT set: on a listener of its own (METRICS_HOST, default 127.0.0.1), never on the API port;
 * - else METRICS_TOKEN set: on the API port, for `Authorization: Bearer <METRICS_TOKEN>` only;
 * - else: on the API port, open outside production, and absent (404) in production.
 */
export function registerMetrics(app: FastifyInstance, services: Services): void {
  const config = services.config;
  const client = (services.db as unknown as { $client?: unknown }).$client;
  const collector = createGaugeCollector({
    db: services.db,
    driver: client instanceof pg.Pool ? 'postgres' : 'pglite',
    pools: client instanceof pg.Pool ? () => poolsOf(services.db) : undefined,
    clock: services.clock,
    redisConnected: () => services.rateLimiter.redisConnected(),
    reconciliation: services.reconciliation,
    unknownOutcomes: services.unknownOutcomes,
  });
  const render = async (fresh = false) => {
    await collector.refresh(fresh);
    readBulkheads(services.bulkheads.stats());
    readUpstreamFaults(services.upstream?.faultCounts());
    readUpstreamRefusals(services.upstream?.refusalCounts());
    return registry.metrics();
  };
  app.decorate('metricsText', render);

  if (config.METRICS_PORT !== undefined) {
    let server: Server | undefined;
    app.addHook('onListen', async () => {
      server = await listenForMetrics(config, () => render());
      app.log.info({ address: server.address() }, 'metrics listening');
    });
    app.addHook('onClose', async () => {
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    });
    return;
  }
  if (!config.METRICS_TOKEN && isProduction(config)) return;
  app.get('/metrics', { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
    if (config.METRICS_TOKEN && !bearerMatches(request.headers.authorization, config.METRICS_TOKEN))
      return reply.code(401).send({ statusCode: 401, message: 'A metrics token is required.', error: 'Unauthorized' });
    return reply.type(registry.contentType).send(await render());
  });
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = header?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  return given !== undefined && safeEqual(given, token);
}

async function listenForMetrics(config: Config, render: () => Promise<string>): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    render().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.METRICS_PORT, config.METRICS_HOST, () => resolve());
  });
  return server;
}

export const metricsAddress = (server: Server) => server.address() as AddressInfo;

declare module 'fastify' {
  interface FastifyInstance {
    /** The Prometheus text of this process, database gauges refreshed (for tests and the admin CLI). */
    metricsText: (fresh?: boolean) => Promise<string>;
  }
}
