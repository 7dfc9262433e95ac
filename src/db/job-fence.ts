/** The claim a job handler runs under: the job's id and this claim's lease token. */
export interface LeaseClaim {
  id: string;
  leaseToken: string;
}

/**
 * Every transaction a job's handler opens, in any service it calls, begins with the lease fence:
 * the job's row is locked and its lease token checked before the transaction's first statement.
 * A worker whose lease was taken over (a pause past the lease, a partition) therefore cannot
 * commit a money effect the new holder also commits. The runner gives the handler a database
 * handle of its own claim (`fencedOf` in pool-routing.ts, bound by database-binding.ts), whose
 * transactions run `fenceTransaction` right after BEGIN, on PostgreSQL and PGlite alike.
 */

/** The fence's statement (locks the job's row until the transaction ends); no row means the lease is lost. */
export const LEASE_FENCE_SQL =
  "select 1 from jobs where id = $1 and lease_token = $2::uuid and status = 'pending' for update";

export class LeaseLostError extends Error {
  constructor(jobId: string) {
    super(`The lease on job ${jobId} was taken over by another worker; its effect is left to that worker.`);
    this.name = 'LeaseLostError';
  }
}

type Query = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;

/** Checks the claim's lease inside a transaction just begun. */
export async function fenceTransaction(query: Query, claim: LeaseClaim): Promise<void> {
  const { rows } = await query(LEASE_FENCE_SQL, [claim.id, claim.leaseToken]);
  if (rows.length === 0) throw new LeaseLostError(claim.id);
}
