import pg from 'pg';

/**
 * What a bench server sends to its database, counted the same way in the gateway and in every
 * bare-pg peer of `npm run bench:money`: round trips (every statement a client sends; on PGlite,
 * every statement it runs) and writing commits (transactions that wrote and committed, and
 * statements that wrote on their own: pg_stat_database counts read-only statements as commits too).
 */
export class StatementCounter {
  roundTrips = 0;
  writingCommits = 0;
  private readonly open = new WeakMap<object, { wrote: boolean }>();

  /** One statement `first` (its text, or a query config with `text`) sent on `session`. */
  note(session: object, first: unknown): void {
    this.roundTrips++;
    const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
    if (/^\s*begin\b/i.test(text)) this.open.set(session, { wrote: false });
    else if (/^\s*(commit|rollback)\b/i.test(text)) {
      if (/^\s*commit/i.test(text) && this.open.get(session)?.wrote) this.writingCommits++;
      this.open.delete(session);
    } else if (/\b(insert|update|delete)\b/i.test(text)) {
      const transaction = this.open.get(session);
      if (transaction) transaction.wrote = true;
      else this.writingCommits++;
    }
  }

  /** The counts since the last call, and a fresh start. */
  take(): { roundTrips: number; writingCommits: number } {
    const counts = { roundTrips: this.roundTrips, writingCommits: this.writingCommits };
    this.roundTrips = 0;
    this.writingCommits = 0;
    return counts;
  }
}

/** Counts every statement any node-postgres client of this process sends (pools' clients included). */
export function countPgStatements(): StatementCounter {
  const counter = new StatementCounter();
  const target = pg.Client.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const query = target['query']!;
  target['query'] = function (this: object, ...args: unknown[]) {
    counter.note(this, args[0]);
    return query.apply(this, args);
  };
  return counter;
}
