import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { bytes, createdAt, tokenUnits, updatedAt } from './columns.js';

/**
 * The sandbox EVM chains (src/domain/evm/sandbox-*), one per network, shared by every instance.
 * A chain's state is a Merkle Patricia trie whose nodes live in `evm_sandbox_nodes`; its head row
 * names the state root of its latest block. A block is committed by one short transaction that
 * moves the head on only from the head it was built on (compare-and-set), so two instances never
 * both extend the same block. A network never used has no head row and reads as empty.
 */
export const evmSandboxHeads = pgTable('evm_sandbox_heads', {
  network: text('network').primaryKey(),
  stateRoot: bytes('state_root').notNull(),
  blockNumber: bigint('block_number', { mode: 'bigint' }).notNull(),
  blockHash: text('block_hash').notNull(),
  /** Held by the mempool's pause: accepted transactions wait until released. */
  paused: boolean('paused').notNull().default(false),
  /** The instance producing blocks now, and until when its lease holds (one producer at a time). */
  producer: text('producer'),
  producerUntil: timestamp('producer_until', { withTimezone: true, mode: 'date' }),
  updatedAt: updatedAt(),
});

/** Trie nodes (and contract code) of every sandbox EVM chain, keyed by their hash: written once, never changed. */
export const evmSandboxNodes = pgTable('evm_sandbox_nodes', {
  key: bytes('key').primaryKey(),
  value: bytes('value').notNull(),
});

export const evmSandboxBlocks = pgTable(
  'evm_sandbox_blocks',
  {
    network: text('network').notNull(),
    number: bigint('number', { mode: 'bigint' }).notNull(),
    hash: text('hash').notNull(),
    parentHash: text('parent_hash').notNull(),
    /** Seconds since the epoch, as the block header has it. */
    timestamp: bigint('timestamp', { mode: 'bigint' }).notNull(),
    baseFeePerGas: tokenUnits('base_fee_per_gas').notNull(),
    gasUsed: tokenUnits('gas_used').notNull(),
    stateRoot: bytes('state_root').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.network, t.number] }),
    uniqueIndex('evm_sandbox_blocks_hash_key').on(t.network, t.hash),
  ],
);

/** A mined transaction with its receipt. */
export const evmSandboxTransactions = pgTable(
  'evm_sandbox_transactions',
  {
    network: text('network').notNull(),
    hash: text('hash').notNull(),
    blockNumber: bigint('block_number', { mode: 'bigint' }).notNull(),
    position: integer('position').notNull(),
    fromAddress: text('from_address').notNull(),
    toAddress: text('to_address'),
    nonce: bigint('nonce', { mode: 'bigint' }).notNull(),
    raw: bytes('raw').notNull(),
    /** `success` or `reverted` (included, nonce used, fee spent). */
    status: text('status').notNull(),
    gasUsed: tokenUnits('gas_used').notNull(),
    effectiveGasPrice: tokenUnits('effective_gas_price').notNull(),
    dataFee: tokenUnits('data_fee').notNull(),
    /** Why a reverted transaction reverted, decoded from its revert data when the contracts' ABIs name it. */
    revertReason: text('revert_reason'),
  },
  (t) => [
    primaryKey({ columns: [t.network, t.hash] }),
    index('evm_sandbox_transactions_block_idx').on(t.network, t.blockNumber),
  ],
);

/** Every log of a mined transaction, by block, for log filters (address and topics). */
export const evmSandboxLogs = pgTable(
  'evm_sandbox_logs',
  {
    network: text('network').notNull(),
    blockNumber: bigint('block_number', { mode: 'bigint' }).notNull(),
    /** The log's index in its block. */
    logIndex: integer('log_index').notNull(),
    transactionHash: text('transaction_hash').notNull(),
    /** Lower-case hex. */
    address: text('address').notNull(),
    topic0: text('topic0'),
    topic1: text('topic1'),
    topic2: text('topic2'),
    topic3: text('topic3'),
    data: bytes('data').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.network, t.blockNumber, t.logIndex] }),
    index('evm_sandbox_logs_address_idx').on(t.network, t.address, t.blockNumber),
    index('evm_sandbox_logs_tx_idx').on(t.network, t.transactionHash),
  ],
);

/**
 * Transactions accepted and not yet mined: stored before `sendRaw` answers, so a restart loses
 * none. One per sender and nonce (no replacement in the sandbox).
 */
export const evmSandboxMempool = pgTable(
  'evm_sandbox_mempool',
  {
    network: text('network').notNull(),
    hash: text('hash').notNull(),
    /** Lower-case hex. */
    sender: text('sender').notNull(),
    nonce: bigint('nonce', { mode: 'bigint' }).notNull(),
    raw: bytes('raw').notNull(),
    arrival: bigserial('arrival', { mode: 'bigint' }).notNull(),
    /** The place `release(order)` gave it (lowest first); unset ones follow in arrival order. */
    priority: integer('priority'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.network, t.hash] }),
    uniqueIndex('evm_sandbox_mempool_sender_nonce_key').on(t.network, t.sender, t.nonce),
  ],
);
