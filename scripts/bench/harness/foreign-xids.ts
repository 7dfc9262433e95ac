import type pg from 'pg';

/**
 * The relay's horizon is cluster-wide: a transaction of another database that holds a transaction id
 * holds back every stamp. Samples, every 100 ms, how long the oldest such transaction has been open,
 * to tell that wait from the gateway's own. Without a client it samples nothing.
 */
export function sampleForeignXids(client: pg.Client | undefined): { ages: number[]; stop(): void } {
  const ages: number[] = [];
  let sampling = false;
  const timer = setInterval(() => {
    if (!client || sampling) return;
    sampling = true;
    client
      .query(
        `select coalesce(extract(epoch from max(now() - xact_start)) * 1000, 0)::float8 as ms from pg_stat_activity
         where backend_xid is not null and datname is distinct from current_database()`,
      )
      .then((r) => ages.push(Number(r.rows[0].ms)))
      .catch(() => undefined)
      .finally(() => {
        sampling = false;
      });
  }, 100);
  return { ages, stop: () => clearInterval(timer) };
}
