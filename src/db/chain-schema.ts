import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  index,
  integer,
  jsonb,
  timestamp,
  pgEnum,
  pgTable,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { createdAt, tokenUnits, updatedAt } from './columns.js';
import { ownerColumns } from './schema.js';

/**
 * A chain send's statuses, for every family (src/domain/chain/chain-sends.ts is the state table).
 * `replaced`: another send with the same nonce landed instead, so this one never can (families
 * whose sends carry a nonce, EVM; a Solana send is never replaced).
 */
export const chainSendStatusEnum = pgEnum('chain_send_status', ['pending', 'confirmed', 'failed', 'replaced']);
/**
 * The native coin (SOL, ETH), a token (an SPL mint, an ERC-20 contract), a swap of one for another,
 * or an approval of a token to a swap's router (an EVM swap's first leg: it moves nothing but its fee).
 */
export const chainSendKindEnum = pgEnum('chain_send_kind', ['native', 'token', 'swap', 'approve']);

/**
 * An outgoing transaction of a custodial wallet of any chain family: a native or token transfer,
 * or a swap. The signed transaction and its hash are stored before it is sent, so it can be
 * re-broadcast after a crash and is never signed twice. While pending, its amount (in its asset)
 * and its fee (in the native asset) are held in the asset ledger (asset-ledger-schema.ts).
 */
export const chainSends = pgTable(
  'chain_sends',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    ...ownerColumns(),
    /** The family that signed it (`solana`, `evm`): the rest of the row is in its terms. */
    family: text('family').notNull(),
    network: text('network').notNull(),
    kind: chainSendKindEnum('kind').notNull(),
    fromAddress: text('from_address').notNull(),
    toAddress: text('to_address').notNull(),
    /** The asset sent (a Solana mint, an ERC-20 contract); null for the native coin. */
    asset: text('asset'),
    amountRaw: tokenUnits('amount_raw').notNull(),
    decimals: integer('decimals').notNull(),
    /**
     * Native units the transaction can cost besides amountRaw, held while pending: Solana's fees and
     * new accounts' rent; an EVM send's fee cap × gas limit plus any data fee.
     */
    feeRaw: tokenUnits('fee_raw').notNull().default(sql`0`),
    /** For swaps: what comes back. */
    outputAsset: text('output_asset'),
    outputAmountRaw: tokenUnits('output_amount_raw'),
    /** The transaction's hash (a Solana signature), known once it is signed. */
    txHash: text('tx_hash').notNull(),
    /** The signed transaction, base64: what re-broadcasts send again. */
    wire: text('wire').notNull(),
    /** The last height it can land at (Solana's lastValidBlockHeight); null where a nonce decides instead. */
    validThroughHeight: bigint('valid_through_height', { mode: 'bigint' }),
    /** The sender's account nonce it uses (EVM); null for a family without nonces. */
    nonce: bigint('nonce', { mode: 'bigint' }),
    /** The block (EVM) or slot (Solana) it landed in, once known. */
    block: bigint('block', { mode: 'bigint' }),
    /** Confirmations the chain reported at the last look (EVM waits for a number of them). */
    confirmations: integer('confirmations').notNull().default(0),
    /** The pending send with the same nonce this one replaces (a fee bump or a cancellation). */
    replaces: uuid('replaces').references((): AnyPgColumn => chainSends.id),
    status: chainSendStatusEnum('status').notNull().default('pending'),
    error: text('error'),
    quoteId: uuid('quote_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('chain_sends_tx_hash_key').on(t.family, t.txHash),
    // A quote is executed at most once, whatever the path that tried it twice.
    uniqueIndex('chain_sends_quote_key').on(t.quoteId).where(sql`${t.quoteId} is not null`),
    // A send is replaced by at most one other (a later bump replaces the replacement).
    uniqueIndex('chain_sends_replaces_key').on(t.replaces).where(sql`${t.replaces} is not null`),
    index('chain_sends_owner_idx').on(t.userId, t.environment, t.family, t.createdAt),
    // A wallet's pending sends (the sandbox's retention keeps their signatures).
    index('chain_sends_pending_idx').on(t.family, t.network, t.fromAddress).where(sql`${t.status} = 'pending'`),
  ],
);

export type ChainSendRow = typeof chainSends.$inferSelect;
export type NewChainSend = typeof chainSends.$inferInsert;

/**
 * A swap quote of a chain family without a table of its own (the EVM's; Solana keeps
 * solana_quotes), kept for its short life so a swap can name it by id.
 */
export const chainQuotes = pgTable(
  'chain_quotes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    family: text('family').notNull(),
    ...ownerColumns(),
    network: text('network').notNull(),
    quote: jsonb('quote').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** When a swap took this quote: set once, by a conditional update, so a quote executes at most once. */
    executedAt: timestamp('executed_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [index('chain_quotes_owner_idx').on(t.userId, t.environment, t.createdAt)],
);
