import { Writable } from 'node:stream';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/domain/clock.js';
import { createServices, type Services } from '../../src/services.js';
import { testDatabase } from './database.js';

let destination: pino.DestinationStream | undefined;

/**
 * Logger options for test apps: silent, unless TEST_LOG_FILE names a file, in which case every
 * test app appends its JSON log there at TEST_LOG_LEVEL (default debug). CI runs the suite so and
 * greps the file for secrets (scripts/scan-log.ts).
 */
export function testLogger(): false | Record<string, unknown> {
  const file = process.env.TEST_LOG_FILE;
  if (!file) return false;
  destination ??= pino.destination({ dest: file, append: true, sync: true, mkdir: true });
  return { level: process.env.TEST_LOG_LEVEL ?? 'debug', stream: destination };
}

/**
 * What a test that reads log lines needs: services on the worker's database built at a log level
 * (info, the production default, unless given), and a stream collecting every line the app writes.
 */
export async function loggingAt(
  level: 'info' | 'trace' = 'info',
): Promise<{ services: Services; lines: string[]; stream: Writable }> {
  const { db } = await testDatabase();
  const services = createServices(
    loadConfig({}, { NODE_ENV: 'test', LOG_LEVEL: level }),
    db,
    systemClock,
    () => undefined,
  );
  const lines: string[] = [];
  const stream = new Writable({ write: (chunk, _enc, done) => (lines.push(chunk.toString()), done()) });
  return { services, lines, stream };
}
