import pg from 'pg';
import type { TestApp } from './app.js';

/** The readiness watch's statement (DependencyHealth.checkDatabase). */
const READINESS_CHECK = /current_setting\('transaction_read_only'\) as read_only/;

/**
 * Counts what reaches the driver: every statement, and transactions opened (a `begin` on
 * PostgreSQL, where every statement passes through a pooled Client; PGlite's `transaction`).
 */
export function watchDriver(t: TestApp) {
  const seen = { statements: [] as string[], transactions: 0 };
  const note = (first: unknown) => {
    const text = typeof first === 'string' ? first : ((first as { text?: string })?.text ?? '');
    // The readiness watch checks the database every second beside whatever a test measures
    // (src/health/readiness-watch.ts); a slow machine stretched the window enough to catch one.
    if (READINESS_CHECK.test(text)) return;
    seen.statements.push(text);
    if (/^\s*begin\b/i.test(text)) seen.transactions++;
  };
  const pglite = (t.services.db as unknown as { $client: Record<string, (...a: unknown[]) => unknown> }).$client;
  const targets: Array<[Record<string, (...a: unknown[]) => unknown>, string, (args: unknown[]) => void]> =
    pglite instanceof pg.Pool
      ? [[pg.Client.prototype as never, 'query', (args) => note(args[0])]]
      : [
          [pglite, 'query', (args) => note(args[0])],
          [pglite, 'transaction', () => seen.transactions++],
        ];
  const restore = targets.map(([target, name, spy]) => {
    const original = target[name]!;
    target[name] = function (this: unknown, ...args: unknown[]) {
      spy(args);
      return original.apply(this, args);
    };
    return () => {
      target[name] = original;
    };
  });
  return { seen, stop: () => restore.forEach((undo) => undo()) };
}
