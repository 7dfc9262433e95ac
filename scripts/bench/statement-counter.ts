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
  return countStatements(undefined).counter;
}

type Methods = Record<string, (...args: unknown[]) => unknown>;

/**
 * Counts every statement sent to `client` (a database handle's `$client`): a PGlite instance's every
 * statement, its transactions' included; for anything else (a pool, or none), every statement any
 * node-postgres client of this process sends. `stop` puts the drivers back as they were.
 */
export function countStatements(client: unknown): { counter: StatementCounter; stop(): void } {
  const counter = new StatementCounter();
  const undo: Array<() => void> = [];
  const wrap = (
    target: Methods,
    name: string,
    replacement: (original: (...a: unknown[]) => unknown) => Methods[string],
  ) => {
    const original = target[name]!;
    target[name] = replacement(original);
    undo.push(() => {
      target[name] = original;
    });
  };
  const isPglite =
    typeof (client as Partial<Methods> | undefined)?.['exec'] === 'function' && !(client instanceof pg.Pool);
  if (!isPglite) {
    wrap(
      pg.Client.prototype as unknown as Methods,
      'query',
      (query) =>
        function (this: object, ...args: unknown[]) {
          counter.note(this, args[0]);
          return query.apply(this, args);
        },
    );
  } else {
    const pglite = client as Methods;
    // PGlite's own transactions run their statements on the transaction object, not the client.
    wrap(
      pglite,
      'transaction',
      (transaction) =>
        function (this: object, ...args: unknown[]) {
          const callback = args[0] as (tx: Methods) => Promise<unknown>;
          return transaction.call(this, async (tx: Methods) => {
            const session = {};
            counter.note(session, 'begin');
            for (const name of ['query', 'exec']) {
              const original = tx[name]!;
              tx[name] = (...inner: unknown[]) => {
                counter.note(session, inner[0]);
                return original.apply(tx, inner);
              };
            }
            const result = await callback(tx);
            counter.note(session, 'commit');
            return result;
          });
        },
    );
    for (const name of ['query', 'exec'])
      wrap(
        pglite,
        name,
        (original) =>
          function (this: object, ...args: unknown[]) {
            counter.note(this, args[0]);
            return original.apply(this, args);
          },
      );
  }
  return {
    counter,
    stop: () => {
      for (const step of undo.splice(0).reverse()) step();
    },
  };
}
