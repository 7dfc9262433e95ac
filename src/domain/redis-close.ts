import type { Redis } from 'ioredis';

/**
 * Closes a Redis client whatever its state: a connected one quits (its replies flushed); one that
 * is not connected is dropped, as quit() is refused by a client without an offline queue, which
 * then went on reconnecting.
 */
export async function closeRedis(client: Redis | undefined): Promise<void> {
  if (!client) return;
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}
