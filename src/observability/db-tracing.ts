import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import pg from 'pg';
import { statementName } from './log-safety.js';
import { tracer, tracingEnabled } from './tracing.js';

/**
 * SQL spans for both drivers, made where every statement passes: node-postgres' Client.query
 * (pool and transaction clients alike) and PGlite's query/exec (and those of its transactions).
 * A span carries the statement's name and the driver, never its text's values or parameters.
 */
function traced<T>(system: string, text: unknown, run: () => Promise<T>): Promise<T> {
  if (!tracingEnabled() || !trace.getSpan(context.active())) return run();
  const name = statementName(typeof text === 'string' ? text : '');
  return tracer().startActiveSpan(
    name,
    { kind: SpanKind.CLIENT, attributes: { 'db.system.name': system, 'db.query.summary': name } },
    async (span) => {
      try {
        return await run();
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as { code?: string }).code ?? 'error' });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** The promise-style calls of `query` (what Drizzle makes) go through a span; callback-style ones pass. */
function tracedQuery(target: { query: (...a: unknown[]) => unknown }, args: unknown[]): unknown {
  const [config, values, callback] = args as [{ text?: string; submit?: unknown } | string, unknown, unknown];
  const promiseStyle =
    typeof values !== 'function' &&
    typeof callback !== 'function' &&
    !(config && typeof config === 'object' && typeof config.submit === 'function');
  if (!promiseStyle || !tracingEnabled()) return target.query(...args);
  const text = typeof config === 'string' ? config : config?.text;
  return traced('postgresql', text, () => target.query(...args) as Promise<unknown>);
}

/** A node-postgres Client whose queries are traced (transactions run on one); the pool's `Client`. */
export class TracedPgClient extends pg.Client {
  override query(...args: unknown[]): never {
    return tracedQuery(
      { query: (...a) => (super.query as (...b: unknown[]) => unknown).apply(this, a) },
      args,
    ) as never;
  }
}

/**
 * A pool whose own `query` is traced: queries outside a transaction go through it, and it calls its
 * client in callback style, which TracedPgClient leaves alone, so each statement has one span.
 */
export class TracedPgPool extends pg.Pool {
  override query(...args: unknown[]): never {
    return tracedQuery(
      { query: (...a) => (super.query as (...b: unknown[]) => unknown).apply(this, a) },
      args,
    ) as never;
  }
}

type Queryable = Pick<PGlite | Transaction, 'query' | 'exec'>;

function traceQueryable<T extends Queryable>(target: T): T {
  const query = target.query.bind(target);
  const exec = target.exec.bind(target);
  target.query = ((text: string, ...rest: unknown[]) =>
    traced('pglite', text, () => (query as (...a: unknown[]) => Promise<unknown>)(text, ...rest))) as T['query'];
  target.exec = ((text: string, ...rest: unknown[]) =>
    traced('pglite', text, () => (exec as (...a: unknown[]) => Promise<unknown>)(text, ...rest))) as T['exec'];
  return target;
}

/** Traces a PGlite instance's statements, those of its transactions included. */
export function tracePglite(client: PGlite): PGlite {
  traceQueryable(client);
  const transaction = client.transaction.bind(client);
  client.transaction = ((callback: (tx: Transaction) => Promise<unknown>) =>
    transaction((tx) => callback(traceQueryable(tx)))) as PGlite['transaction'];
  return client;
}
