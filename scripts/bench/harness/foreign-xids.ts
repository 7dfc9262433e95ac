import type pg from 'pg';

/**
 * Samples, every 100 ms, how long the oldest transaction of another database holding a transaction id
 * has been open. The relay used to wait for every open transaction of the cluster; beside the
 * stamping lag this shows that it no longer does. Without a client it samples nothing.
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
