import pino from 'pino';

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
