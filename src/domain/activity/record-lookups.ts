import { type Column, eq, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { billRecords } from '../../db/bills-schema.js';
import type { Database } from '../../db/client.js';
import { offrampOrders } from '../../db/offramp-schema.js';
import { chainSends } from '../../db/chain-schema.js';
import { solanaQuotes } from '../../db/solana-schema.js';
import { deposits, paymentMethods, payouts, walletTransactions } from '../../db/wallet-schema.js';
import type { StoredQuote, SwapQuoteView } from '../solana/swap-quote.js';
import { type Owner, ownedRowsByIds, ownedRowsByReferences } from './owned-rows.js';

/** The owned record tables the graph looks up by id, and by reference where they have one. */
const BY_ID = {
  walletTransactions,
  deposits,
  payouts,
  billRecords,
  paymentMethods,
  solanaTransfers: chainSends,
  offrampOrders,
} as const;
/** Kinds on a table that several kinds share: Solana's sends are the chain sends of family `solana`. */
const ONLY: Partial<Record<keyof typeof BY_ID, SQL>> = { solanaTransfers: eq(chainSends.family, 'solana') };
const BY_REFERENCE = { walletTransactions, deposits, payouts, billRecords, offrampOrders } as const;

export type RecordKind = keyof typeof BY_ID;
export type ReferencedKind = keyof typeof BY_REFERENCE;
export type RecordRow<K extends RecordKind> = (typeof BY_ID)[K]['$inferSelect'];

type Owned = PgTable & { id: Column; userId: Column; environment: Column };

/**
 * Batched lookups of one owner's records, one statement per call: what per-request loaders
 * collect their keys into. Records of anyone else, or of the other environment, are absent.
 */
export class RecordLookups {
  constructor(private readonly db: Database) {}

  byIds<K extends RecordKind>(kind: K, owner: Owner, ids: readonly string[]): Promise<Array<RecordRow<K>>> {
    return ownedRowsByIds(this.db, BY_ID[kind] as unknown as Owned, owner, ids, ONLY[kind]) as Promise<
      Array<RecordRow<K>>
    >;
  }

  byReferences<K extends ReferencedKind>(
    kind: K,
    owner: Owner,
    references: readonly string[],
  ): Promise<Array<RecordRow<K>>> {
    return ownedRowsByReferences(
      this.db,
      BY_REFERENCE[kind] as unknown as Owned & { reference: Column },
      owner,
      references,
    ) as Promise<Array<RecordRow<K>>>;
  }

  /** Stored swap quotes by id, as the caller saw them. */
  async swapQuotesByIds(owner: Owner, ids: readonly string[]): Promise<Array<{ id: string; view: SwapQuoteView }>> {
    return (await ownedRowsByIds(this.db, solanaQuotes, owner, ids)).map((row) => ({
      id: row.id,
      view: (row.quote as StoredQuote).view,
    }));
  }
}
