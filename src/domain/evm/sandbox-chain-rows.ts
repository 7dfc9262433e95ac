import { type SQL, sql } from 'drizzle-orm';
import type { Hex } from 'viem';
import { type Executor, queryRows } from '../../db/client.js';
import type { EvmLog, EvmLogFilter, EvmReceipt } from './evm-chain.js';
import type { EvmNetwork } from './networks.js';
import type { RanTx } from './sandbox-vm.js';

/** A network's head: its latest block and the state root after it. */
export interface ChainHead {
  stateRoot: Uint8Array;
  number: bigint;
  hash: Hex;
  /** The head block's time (seconds): the next block's is never before it. */
  timestamp: bigint;
  paused: boolean;
}

/** A transaction waiting in the mempool. */
export interface PooledTx {
  hash: Hex;
  sender: Hex;
  nonce: bigint;
  raw: Uint8Array;
}

/** A block as committed: its place, its hash and its root. */
export interface CommittedBlock {
  number: bigint;
  hash: Hex;
  parentHash: Hex;
  timestamp: bigint;
  baseFeePerGas: bigint;
  gasUsed: bigint;
  stateRoot: Uint8Array;
}

const buffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const hex = (bytes: Uint8Array): Hex => `0x${buffer(bytes).toString('hex')}`;

interface LogRow {
  address: string;
  topic0: string | null;
  topic1: string | null;
  topic2: string | null;
  topic3: string | null;
  data: Uint8Array;
  block_number: string;
  transaction_hash: string;
  log_index: number;
}

const toLog = (row: LogRow): EvmLog => ({
  address: row.address,
  topics: [row.topic0, row.topic1, row.topic2, row.topic3].filter((t): t is string => t !== null),
  data: hex(new Uint8Array(row.data)),
  blockNumber: BigInt(row.block_number),
  transactionHash: row.transaction_hash,
  logIndex: Number(row.log_index),
});

const LOG_COLUMNS = sql.raw(
  'address, topic0, topic1, topic2, topic3, data, block_number::text as block_number, transaction_hash, log_index',
);

interface HeadRow {
  state_root: Uint8Array;
  block_number: string;
  block_hash: string;
  timestamp: string;
  paused: boolean;
}

const headOf = (row: HeadRow): ChainHead => ({
  stateRoot: new Uint8Array(row.state_root),
  number: BigInt(row.block_number),
  hash: row.block_hash as Hex,
  timestamp: BigInt(row.timestamp),
  paused: row.paused,
});

/**
 * SQL of the sandbox EVM chains' storage (src/db/evm-sandbox-schema.ts), each statement named by
 * its function, in plain parameterised SQL: the block commit runs for every batch of transactions.
 */
export const evmChainRows = {
  async head(db: Executor, network: EvmNetwork): Promise<ChainHead | undefined> {
    const [row] = await queryRows<HeadRow>(
      db,
      sql`select h.state_root, h.block_number::text as block_number, h.block_hash, b.timestamp::text as timestamp, h.paused
          from evm_sandbox_heads h join evm_sandbox_blocks b on b.network = h.network and b.number = h.block_number
          where h.network = ${network}`,
    );
    return row ? headOf(row) : undefined;
  },

  async node(db: Executor, key: string): Promise<Uint8Array | undefined> {
    const [row] = await queryRows<{ value: Uint8Array }>(
      db,
      sql`select value from evm_sandbox_nodes where key = ${Buffer.from(key, 'hex')}`,
    );
    return row ? new Uint8Array(row.value) : undefined;
  },

  /** Stores trie nodes; one already stored (by another block, another network) is the same node. */
  async saveNodes(tx: Executor, nodes: ReadonlyMap<string, Uint8Array>): Promise<void> {
    const entries = [...nodes];
    for (let i = 0; i < entries.length; i += 2_000) {
      const values = sql.join(
        entries.slice(i, i + 2_000).map(([key, value]) => sql`(${Buffer.from(key, 'hex')}, ${buffer(value)})`),
        sql`, `,
      );
      await tx.execute(sql`insert into evm_sandbox_nodes (key, value) values ${values} on conflict (key) do nothing`);
    }
  },

  /** Makes genesis the network's head unless another instance already did (theirs is the same genesis). */
  async createHead(tx: Executor, network: EvmNetwork, genesis: CommittedBlock): Promise<void> {
    await tx.execute(
      sql`insert into evm_sandbox_heads (network, state_root, block_number, block_hash)
          values (${network}, ${buffer(genesis.stateRoot)}, 0, ${genesis.hash}) on conflict (network) do nothing`,
    );
    await this.saveBlock(tx, network, genesis, true);
  },

  async saveBlock(tx: Executor, network: EvmNetwork, block: CommittedBlock, genesis = false): Promise<void> {
    await tx.execute(
      sql`insert into evm_sandbox_blocks (network, number, hash, parent_hash, timestamp, base_fee_per_gas, gas_used, state_root)
          values (${network}, ${block.number}, ${block.hash}, ${block.parentHash}, ${block.timestamp},
            ${block.baseFeePerGas.toString()}::numeric, ${block.gasUsed.toString()}::numeric, ${buffer(block.stateRoot)})
          ${genesis ? sql`on conflict do nothing` : sql``}`,
    );
  },

  /**
   * Moves the head from the block it was built on to the new one and takes the block's
   * transactions (`leaving`) out of the mempool, in one statement; false when the head is no longer
   * there (another instance committed first) or one of them left the mempool meanwhile (dropped).
   * The block commit's first statement: the head row's lock is what every producer of the network
   * contends for, held only for the short commit.
   */
  async advance(tx: Executor, network: EvmNetwork, from: Hex, to: CommittedBlock, leaving: string[]): Promise<boolean> {
    const hashes =
      leaving.length === 0
        ? sql`array[]::text[]`
        : sql`array[${sql.join(
            leaving.map((h) => sql`${h}`),
            sql`, `,
          )}]::text[]`;
    const [row] = await queryRows<{ advanced: number; unpooled: number }>(
      tx,
      sql`with advanced as (
            update evm_sandbox_heads set state_root = ${buffer(to.stateRoot)}, block_number = ${to.number},
              block_hash = ${to.hash}, updated_at = now()
            where network = ${network} and block_hash = ${from} returning 1
          ),
          unpooled as (
            delete from evm_sandbox_mempool where network = ${network} and hash = any(${hashes})
              and exists (select 1 from advanced)
            returning 1
          )
          select (select count(*) from advanced)::int as advanced, (select count(*) from unpooled)::int as unpooled`,
    );
    return row!.advanced === 1 && row!.unpooled === leaving.length;
  },

  /**
   * What a block leaves behind besides its head: its new trie nodes (one already stored, by another
   * block or network, is the same node), the block, its transactions and their logs, in as few
   * statements as the parameter limit allows (one for a block of ordinary size).
   */
  async saveBlockContents(
    tx: Executor,
    network: EvmNetwork,
    block: CommittedBlock,
    nodes: ReadonlyMap<string, Uint8Array>,
    ran: RanTx[],
  ): Promise<void> {
    const parts: Array<{ params: number; sql: SQL }> = [
      {
        params: 8,
        sql: sql`insert into evm_sandbox_blocks (network, number, hash, parent_hash, timestamp, base_fee_per_gas, gas_used, state_root)
          values (${network}, ${block.number}, ${block.hash}, ${block.parentHash}, ${block.timestamp},
            ${block.baseFeePerGas.toString()}::numeric, ${block.gasUsed.toString()}::numeric, ${buffer(block.stateRoot)})`,
      },
    ];
    const entries = [...nodes];
    for (let i = 0; i < entries.length; i += 2_000) {
      const chunk = entries.slice(i, i + 2_000);
      parts.push({
        params: chunk.length * 2,
        sql: sql`insert into evm_sandbox_nodes (key, value) values ${sql.join(
          chunk.map(([key, value]) => sql`(${Buffer.from(key, 'hex')}, ${buffer(value)})`),
          sql`, `,
        )} on conflict (key) do nothing`,
      });
    }
    if (ran.length > 0)
      parts.push({
        params: ran.length * 13,
        sql: sql`insert into evm_sandbox_transactions (network, hash, block_number, position, from_address, to_address, nonce, raw,
            status, gas_used, effective_gas_price, data_fee, revert_reason) values ${sql.join(
              ran.map(
                (t, i) =>
                  sql`(${network}, ${t.hash}, ${block.number}, ${i}, ${t.from}, ${t.to}, ${t.nonce}, ${buffer(t.raw)}, ${t.status},
                    ${t.gasUsed.toString()}::numeric, ${t.effectiveGasPrice.toString()}::numeric, ${t.dataFee.toString()}::numeric,
                    ${t.revertReason})`,
              ),
              sql`, `,
            )}`,
      });
    const logs = ran.flatMap((t) => t.logs.map((log) => ({ log, hash: t.hash })));
    for (let i = 0; i < logs.length; i += 1_000) {
      const chunk = logs.slice(i, i + 1_000);
      parts.push({
        params: chunk.length * 10,
        sql: sql`insert into evm_sandbox_logs (network, block_number, log_index, transaction_hash, address, topic0, topic1, topic2,
              topic3, data) values ${sql.join(
                chunk.map(({ log, hash }, j) => {
                  const [t0, t1, t2, t3] = log.topics;
                  return sql`(${network}, ${block.number}, ${i + j}, ${hash}, ${log.address}, ${t0 ?? null}, ${t1 ?? null}, ${t2 ?? null},
                    ${t3 ?? null}, ${buffer(log.data)})`;
                }),
                sql`, `,
              )}`,
      });
    }
    // Each statement under PostgreSQL's 65,535 parameters; the parts of one run as one statement's CTEs.
    let batch: SQL[] = [];
    let params = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      await tx.execute(
        sql`with ${sql.join(
          batch.map((part, i) => sql`${sql.raw(`w${i}`)} as (${part})`),
          sql`, `,
        )} select 1`,
      );
      batch = [];
      params = 0;
    };
    for (const part of parts) {
      if (params + part.params > 30_000) await flush();
      batch.push(part.sql);
      params += part.params;
    }
    await flush();
  },

  async receipt(db: Executor, network: EvmNetwork, hash: string): Promise<EvmReceipt | undefined> {
    const [row] = await queryRows<{
      block_number: string;
      block_hash: string;
      from_address: string;
      to_address: string | null;
      nonce: string;
      status: 'success' | 'reverted';
      gas_used: string;
      effective_gas_price: string;
      data_fee: string;
      revert_reason: string | null;
    }>(
      db,
      sql`select t.block_number::text as block_number, b.hash as block_hash, from_address, to_address, nonce::text as nonce,
            status, t.gas_used::text as gas_used, effective_gas_price::text as effective_gas_price, data_fee::text as data_fee,
            revert_reason
          from evm_sandbox_transactions t
          join evm_sandbox_blocks b on b.network = t.network and b.number = t.block_number
          where t.network = ${network} and t.hash = ${hash}`,
    );
    if (!row) return undefined;
    const logs = await queryRows<LogRow>(
      db,
      sql`select ${LOG_COLUMNS} from evm_sandbox_logs
          where network = ${network} and block_number = ${BigInt(row.block_number)} and transaction_hash = ${hash}
          order by log_index`,
    );
    return {
      hash,
      status: row.status,
      blockNumber: BigInt(row.block_number),
      blockHash: row.block_hash,
      from: row.from_address,
      to: row.to_address,
      nonce: BigInt(row.nonce),
      gasUsed: BigInt(row.gas_used),
      effectiveGasPrice: BigInt(row.effective_gas_price),
      dataFee: BigInt(row.data_fee),
      logs: logs.map(toLog),
    };
  },

  async revertReason(db: Executor, network: EvmNetwork, hash: string): Promise<string | undefined> {
    const [row] = await queryRows<{ revert_reason: string | null }>(
      db,
      sql`select revert_reason from evm_sandbox_transactions where network = ${network} and hash = ${hash}`,
    );
    return row?.revert_reason ?? undefined;
  },

  async logs(db: Executor, network: EvmNetwork, filter: EvmLogFilter): Promise<EvmLog[]> {
    const conditions = [sql`network = ${network}`, sql`block_number between ${filter.fromBlock} and ${filter.toBlock}`];
    if (filter.address) conditions.push(sql`address = ${filter.address.toLowerCase()}`);
    (filter.topics ?? []).slice(0, 4).forEach((topic, i) => {
      if (topic !== null && topic !== undefined) conditions.push(sql`${sql.raw(`topic${i}`)} = ${topic.toLowerCase()}`);
    });
    const rows = await queryRows<LogRow>(
      db,
      sql`select ${LOG_COLUMNS} from evm_sandbox_logs where ${sql.join(conditions, sql` and `)}
          order by block_number, log_index limit 10000`,
    );
    return rows.map(toLog);
  },

  /** Successful transactions of blocks `fromBlock`..`toBlock` to an address, with their signed bytes. */
  async minedTransfers(
    db: Executor,
    network: EvmNetwork,
    range: { fromBlock: bigint; toBlock: bigint },
  ): Promise<{ hash: string; from: string; to: string; blockNumber: bigint; raw: Uint8Array }[]> {
    const rows = await queryRows<{
      hash: string;
      from_address: string;
      to_address: string;
      block_number: string;
      raw: Uint8Array;
    }>(
      db,
      sql`select hash, from_address, to_address, block_number, raw from evm_sandbox_transactions
          where network = ${network} and block_number between ${range.fromBlock} and ${range.toBlock}
            and status = 'success' and to_address is not null
          order by block_number, position limit 10000`,
    );
    return rows.map((r) => ({
      hash: r.hash,
      from: r.from_address,
      to: r.to_address,
      blockNumber: BigInt(r.block_number),
      raw: r.raw,
    }));
  },

  /** Which of these hashes were mined. */
  async mined(db: Executor, network: EvmNetwork, hashes: string[]): Promise<Set<string>> {
    if (hashes.length === 0) return new Set();
    const rows = await queryRows<{ hash: string }>(
      db,
      sql`select hash from evm_sandbox_transactions
          where network = ${network} and hash in (${sql.join(
            hashes.map((h) => sql`${h}`),
            sql`, `,
          )})`,
    );
    return new Set(rows.map((r) => r.hash));
  },

  /**
   * Claims the network's producer lease for `producer` (free, expired, or its own already) for
   * `ms`, answering the head as it stands under the lease; undefined while another instance holds it.
   */
  async claim(db: Executor, network: EvmNetwork, producer: string, ms: number): Promise<ChainHead | undefined> {
    const [row] = await queryRows<HeadRow>(
      db,
      sql`with claimed as (
            update evm_sandbox_heads set producer = ${producer},
              producer_until = now() + make_interval(secs => ${ms / 1000})
            where network = ${network} and (producer is null or producer = ${producer} or producer_until < now())
            returning network, state_root, block_number, block_hash, paused
          )
          select c.state_root, c.block_number::text as block_number, c.block_hash, b.timestamp::text as timestamp, c.paused
          from claimed c join evm_sandbox_blocks b on b.network = c.network and b.number = c.block_number`,
    );
    return row ? headOf(row) : undefined;
  },

  async release(db: Executor, network: EvmNetwork, producer: string): Promise<void> {
    await db.execute(
      sql`update evm_sandbox_heads set producer = null, producer_until = null
          where network = ${network} and producer = ${producer}`,
    );
  },

  /** What the mempool holds, in the order it is mined: released order first, then arrival. */
  async pooled(db: Executor, network: EvmNetwork, limit: number): Promise<PooledTx[]> {
    const rows = await queryRows<{ hash: string; sender: string; nonce: string; raw: Uint8Array }>(
      db,
      sql`select hash, sender, nonce::text as nonce, raw from evm_sandbox_mempool where network = ${network}
          order by priority asc nulls last, arrival asc limit ${limit}`,
    );
    return rows.map((r) => ({
      hash: r.hash as Hex,
      sender: r.sender as Hex,
      nonce: BigInt(r.nonce),
      raw: new Uint8Array(r.raw),
    }));
  },

  async pendingHashes(db: Executor, network: EvmNetwork): Promise<string[]> {
    const rows = await queryRows<{ hash: string }>(
      db,
      sql`select hash from evm_sandbox_mempool where network = ${network} order by arrival`,
    );
    return rows.map((r) => r.hash);
  },

  /** The nonces each of `senders` has waiting in the mempool. */
  async pendingNonces(db: Executor, network: EvmNetwork, senders: string[]): Promise<Map<string, Set<bigint>>> {
    const nonces = new Map<string, Set<bigint>>();
    if (senders.length === 0) return nonces;
    const rows = await queryRows<{ sender: string; nonce: string }>(
      db,
      sql`select sender, nonce::text as nonce from evm_sandbox_mempool
          where network = ${network} and sender in (${sql.join(
            senders.map((s) => sql`${s}`),
            sql`, `,
          )})`,
    );
    for (const row of rows) {
      const set = nonces.get(row.sender) ?? new Set<bigint>();
      set.add(BigInt(row.nonce));
      nonces.set(row.sender, set);
    }
    return nonces;
  },

  /** Adds transactions; answers those added (not those whose hash, or sender and nonce, already wait). */
  async pool(db: Executor, network: EvmNetwork, txs: PooledTx[]): Promise<Set<string>> {
    if (txs.length === 0) return new Set();
    const values = sql.join(
      txs.map((tx) => sql`(${network}, ${tx.hash}, ${tx.sender}, ${tx.nonce}, ${buffer(tx.raw)})`),
      sql`, `,
    );
    const rows = await queryRows<{ hash: string }>(
      db,
      sql`insert into evm_sandbox_mempool (network, hash, sender, nonce, raw) values ${values}
          on conflict do nothing returning hash`,
    );
    return new Set(rows.map((r) => r.hash));
  },

  /** Takes transactions out of the mempool; answers how many were still there. */
  async unpool(tx: Executor, network: EvmNetwork, hashes: string[]): Promise<number> {
    if (hashes.length === 0) return 0;
    const rows = await queryRows(
      tx,
      sql`delete from evm_sandbox_mempool where network = ${network} and hash in (${sql.join(
        hashes.map((h) => sql`${h}`),
        sql`, `,
      )}) returning 1`,
    );
    return rows.length;
  },

  async setPaused(db: Executor, network: EvmNetwork, paused: boolean): Promise<void> {
    await db.execute(sql`update evm_sandbox_heads set paused = ${paused} where network = ${network}`);
  },

  /** Gives these waiting transactions the first places, in this order. */
  async prioritize(tx: Executor, network: EvmNetwork, hashes: string[]): Promise<void> {
    for (const [i, hash] of hashes.entries())
      await tx.execute(
        sql`update evm_sandbox_mempool set priority = ${i} where network = ${network} and hash = ${hash.toLowerCase()}`,
      );
  },
};
