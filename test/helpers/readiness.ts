import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { waitUntil } from './wait.js';

/**
 * `/readyz` once it has a verdict on the database. `database: unknown` is a readiness check not
 * finished within 10 s: on PGlite it queues behind the requests a test just sent, so on a saturated
 * machine it is slow, not wrong, and a test asking "is the instance healthy after this?" waits for
 * the check (a hang still fails, at the wait's deadline).
 */
export async function readyzVerdict(app: FastifyInstance): Promise<LightMyRequestResponse> {
  let health = await app.inject({ url: '/readyz' });
  await waitUntil(async () => {
    health = await app.inject({ url: '/readyz' });
    return (health.json() as { database?: string }).database !== 'unknown';
  });
  return health;
}
