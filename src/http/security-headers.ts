import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * Registers HTML pages (docs, explorer) in a scope of their own where helmet sets its security
 * headers. API routes stay outside that scope: on JSON responses the headers cost about 5 % of a
 * request's CPU and protect nothing a browser renders.
 */
export async function registerPages(
  app: FastifyInstance,
  pages: (scope: FastifyInstance) => Promise<void> | void,
): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(helmet, {
      // The pages load only their own scripts; GraphiQL's editor sets inline styles.
      contentSecurityPolicy: {
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'", "'unsafe-inline'"],
          imgSrc: ["'self'", 'data:'],
          fontSrc: ["'self'", 'data:'],
          connectSrc: ["'self'"],
          frameAncestors: ["'none'"],
        },
      },
    });
    await pages(scope);
  });
}
