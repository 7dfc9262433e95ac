import { and, eq, inArray, ne, or } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { reconBreaks } from '../../db/reconciliation-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Break } from './matcher.js';

interface RunRef {
  environment: Environment;
  businessDate: string;
  runId: string;
  /** When the run started: a new break's detection time. */
  at: Date;
}

/**
 * Stores a run's breaks: one already open for the same item and kind is the same break seen again
 * (its figures and last run updated); any other is a new row.
 */
export async function storeBreaks(
  tx: Executor,
  run: RunRef,
  found: Array<{ provider: string; breaks: Break[] }>,
): Promise<void> {
  for (const { provider, breaks } of found) {
    for (const b of breaks) {
      const values = {
        currency: b.currency,
        ourAmount: b.ours ? b.ours.amount.toString() : null,
        theirAmount: b.theirs?.amount != null ? b.theirs.amount.toString() : null,
        ourStatus: b.ours?.status ?? null,
        theirStatus: b.theirs?.status ?? null,
        detail: b.theirs ? { providerRef: b.theirs.providerRef } : null,
        lastRunId: run.runId,
      };
      const [seen] = await tx
        .update(reconBreaks)
        .set(values)
        .where(
          and(
            eq(reconBreaks.environment, run.environment),
            eq(reconBreaks.provider, provider),
            eq(reconBreaks.itemType, b.itemType),
            eq(reconBreaks.reference, b.reference),
            eq(reconBreaks.kind, b.kind),
            eq(reconBreaks.status, 'open'),
          ),
        )
        .returning({ id: reconBreaks.id });
      // A concurrent run of the same day may have inserted it a moment ago: then it is that row.
      if (!seen)
        await tx
          .insert(reconBreaks)
          .values({
            ...values,
            environment: run.environment,
            provider,
            businessDate: run.businessDate,
            itemType: b.itemType,
            reference: b.reference,
            kind: b.kind,
            firstRunId: run.runId,
            detectedAt: run.at,
          })
          .onConflictDoNothing();
    }
  }
}

/**
 * Open breaks of the day, of the providers this run read, that it no longer found: cleared (a late
 * record arrived). A balance is of the run, not of a day: one no later run finds is cleared
 * whatever day first found it.
 */
export async function clearUnseenBreaks(tx: Executor, run: RunRef & { providers: string[] }): Promise<void> {
  if (run.providers.length === 0) return;
  await tx
    .update(reconBreaks)
    .set({ status: 'cleared', resolvedAt: run.at })
    .where(
      and(
        eq(reconBreaks.environment, run.environment),
        or(eq(reconBreaks.businessDate, run.businessDate), eq(reconBreaks.kind, 'balance_differs')),
        inArray(reconBreaks.provider, run.providers),
        eq(reconBreaks.status, 'open'),
        ne(reconBreaks.lastRunId, run.runId),
      ),
    );
}
