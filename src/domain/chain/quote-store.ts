import { and, eq, isNull } from 'drizzle-orm';
import { chainQuotes } from '../../db/chain-schema.js';
import type { Executor } from '../../db/client.js';
import type { Principal } from '../auth/principal.js';
import { DomainError } from '../errors.js';
import { isUuid } from '../ids.js';

/**
 * Stored quotes of a family on chain_quotes: kept for their short life so a swap names one by id,
 * and taken once, by a conditional update, so of two swaps racing on one quote exactly one runs.
 */
export interface QuoteRecord<Stored> {
  id: string;
  network: string;
  stored: Stored;
  expiresAt: Date;
  executedAt: Date | null;
}

export const chainQuoteStore = (family: string) => ({
  async insert(
    db: Executor,
    principal: Principal,
    row: { id: string; network: string; stored: unknown; expiresAt: Date },
  ): Promise<void> {
    await db.insert(chainQuotes).values({
      id: row.id,
      family,
      userId: principal.userId,
      environment: principal.environment,
      network: row.network,
      quote: row.stored,
      expiresAt: row.expiresAt,
    });
  },

  /** The caller's own quote of this family; anyone else's, or none, is NOT_FOUND. */
  async find<Stored>(db: Executor, principal: Principal, quoteId: string): Promise<QuoteRecord<Stored>> {
    const [row] = isUuid(quoteId)
      ? await db
          .select()
          .from(chainQuotes)
          .where(
            and(
              eq(chainQuotes.id, quoteId),
              eq(chainQuotes.family, family),
              eq(chainQuotes.userId, principal.userId),
              eq(chainQuotes.environment, principal.environment),
            ),
          )
      : [];
    if (!row)
      throw new DomainError('NOT_FOUND', `Quote ${JSON.stringify(quoteId)} was not found.`, { field: 'quoteId' });
    return {
      id: row.id,
      network: row.network,
      stored: row.quote as Stored,
      expiresAt: row.expiresAt,
      executedAt: row.executedAt,
    };
  },

  /** Marks the quote executed at `at`, once; CONFLICT when another swap took it first. */
  async take(db: Executor, quoteId: string, at: Date): Promise<void> {
    const [taken] = await db
      .update(chainQuotes)
      .set({ executedAt: at })
      .where(and(eq(chainQuotes.id, quoteId), isNull(chainQuotes.executedAt)))
      .returning({ id: chainQuotes.id });
    if (!taken) throw quoteUsed(quoteId);
  },
});

export const quoteUsed = (quoteId: string) =>
  new DomainError(
    'CONFLICT',
    `Quote ${quoteId} was already executed: a quote swaps once. Ask for a new quote, or retry with the first request's Idempotency-Key to get its answer.`,
    { field: 'quoteId' },
  );

export const quoteExpired = (quoteId: string, expiresAt: Date) =>
  new DomainError('QUOTE_EXPIRED', `Quote ${quoteId} expired at ${expiresAt.toISOString()}: ask for a new quote.`, {
    field: 'quoteId',
  });

/** Refusal of a swap whose price moved beyond its quote's slippage: nothing was signed. */
export const priceMovedBeyond = (slippageTolerance: string) =>
  new DomainError(
    'PRICE_MOVED',
    `The price moved beyond the quote's ${slippageTolerance} % slippage since it was given; nothing was swapped. Ask for a new quote.`,
    { field: 'slippageBps' },
  );
