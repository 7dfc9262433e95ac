import { and, eq, inArray } from 'drizzle-orm';
import { getAddress, toEventSelector } from 'viem';
import { chainSends } from '../../db/chain-schema.js';
import type { Database } from '../../db/client.js';
import { runIn, runStatement, statement } from '../../db/plain-sql.js';
import type { Environment } from '../auth/permissions.js';
import type { Clock } from '../clock.js';
import { recordEvent } from '../events/outbox.js';
import { formatUnits } from '../money/decimal.js';
import type { EvmChains } from './evm-chains.js';
import { evmTxUrl } from './evm-send-store.js';
import { EVM, type EvmWallets } from './evm-wallets.js';
import { EVM_NETWORK_SPECS, type EvmNetwork } from './networks.js';

/** ERC-20's `Transfer(address indexed from, address indexed to, uint256 value)`. */
export const TRANSFER_TOPIC = toEventSelector('Transfer(address,address,uint256)');
/** Blocks read per network per round at most. */
const BLOCKS_PER_ROUND = 500n;

const WATCH = statement(
  'evm_incoming_watch_v1',
  `insert into evm_incoming_cursors (environment, network, block) values ($1::environment, $2::text, -1)
   on conflict do nothing`,
);
const CURSORS = statement(
  'evm_incoming_cursors_v1',
  `select environment, network, block::text as block from evm_incoming_cursors order by environment, network`,
);
const ADVANCE = statement(
  'evm_incoming_advance_v1',
  `update evm_incoming_cursors set block = $4::bigint, updated_at = now()
   where environment = $1::environment and network = $2::text and block = $3::bigint
   returning 1`,
);

/** An arrival at a custodial address: an ERC-20 `Transfer` log, or a transaction's native value. */
interface Arrival {
  hash: string;
  /** Unique per arrival: the hash and the log index, or the hash and `native`. */
  reference: string;
  block: bigint;
  /** The token's symbol, or the network's native coin's. */
  asset: string;
  /** The token's contract; null for the native coin. */
  token: string | null;
  decimals: number;
  from: string;
  to: string;
  amountRaw: bigint;
}

/**
 * Tokens arriving at custodial EVM wallets, told once as `transaction.completed` (CRYPTO_DEPOSIT):
 * each watched network's Transfer logs of its supported tokens are read past the network's cursor,
 * and the events are recorded in the transaction that moves the cursor (guarded by the block it was
 * read at, so of two watchers one tells them). A network is watched from its first use in the
 * environment (its cursor starts before genesis), so a network never used is never read.
 */
export class EvmIncoming {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly chains: EvmChains,
    private readonly wallets: EvmWallets,
  ) {}

  private readonly bells = new Set<() => void>();

  /** Says blocks were mined by this process (a send, a faucet grant), so the watch reads them now. */
  ring(): void {
    for (const bell of this.bells) bell();
  }

  /** Calls `listener` on each ring; answers how to stop. */
  onRing(listener: () => void): () => void {
    this.bells.add(listener);
    return () => this.bells.delete(listener);
  }

  /** Watches an environment's network from its first block on (idempotent). */
  async watch(environment: Environment, network: EvmNetwork): Promise<void> {
    await runStatement(this.db, WATCH, [environment, network]);
  }

  /** One round over every watched network; answers how many arrivals were told. */
  async poll(): Promise<number> {
    const cursors = await runStatement<{ environment: Environment; network: EvmNetwork; block: string }>(
      this.db,
      CURSORS,
      [],
    );
    let told = 0;
    for (const cursor of cursors)
      told += await this.pollNetwork(cursor.environment, cursor.network, BigInt(cursor.block));
    return told;
  }

  private async pollNetwork(environment: Environment, network: EvmNetwork, after: bigint): Promise<number> {
    const chain = this.chains.chainFor(environment, network);
    const head = await chain.height();
    if (head <= after) return 0;
    const fromBlock = after + 1n;
    const toBlock = head - fromBlock >= BLOCKS_PER_ROUND ? fromBlock + BLOCKS_PER_ROUND - 1n : head;
    const tokens = new Map(
      EVM_NETWORK_SPECS[network].tokens.map(
        (token) => [this.chains.tokenContract(environment, network, token).toLowerCase(), token] as const,
      ),
    );
    const logs = await chain.logs({ fromBlock, toBlock, topics: [TRANSFER_TOPIC] });
    const tokenArrivals = logs.flatMap((log): Arrival[] => {
      const token = tokens.get(log.address.toLowerCase());
      if (!token || log.topics.length < 3) return [];
      const from = getAddress(`0x${log.topics[1]!.slice(-40)}`);
      const to = getAddress(`0x${log.topics[2]!.slice(-40)}`);
      if (from === to) return [];
      return [
        {
          hash: log.transactionHash,
          reference: `${log.transactionHash}:${log.logIndex}`,
          block: log.blockNumber,
          asset: token.symbol,
          token: log.address,
          decimals: token.decimals,
          from,
          to,
          amountRaw: BigInt(log.data),
        },
      ];
    });
    const native = EVM_NETWORK_SPECS[network].native;
    const nativeArrivals = (await chain.nativeTransfers({ fromBlock, toBlock }))
      .filter((transfer) => transfer.from !== transfer.to)
      .map(
        (transfer): Arrival => ({
          hash: transfer.hash,
          reference: `${transfer.hash}:native`,
          block: transfer.blockNumber,
          asset: native.symbol,
          token: null,
          decimals: native.decimals,
          from: transfer.from,
          to: transfer.to,
          amountRaw: transfer.value,
        }),
      );
    const transfers = [...nativeArrivals, ...tokenArrivals];
    const owners = await this.wallets.ownersOf(environment, [...new Set(transfers.map((t) => t.to))]);
    // A swap's output comes back to the wallet that sent the swap: it is the swap's (told as its
    // CRYPTO_SWAP event), not a deposit from elsewhere.
    const hashes = [...new Set(transfers.map((t) => t.hash.toLowerCase()))];
    const sentByUs =
      hashes.length === 0
        ? []
        : await this.db
            .select({ hash: chainSends.txHash, from: chainSends.fromAddress })
            .from(chainSends)
            .where(and(eq(chainSends.family, EVM), inArray(chainSends.txHash, hashes)));
    const ownSwaps = new Set(sentByUs.map((r) => `${r.hash.toLowerCase()}:${r.from.toLowerCase()}`));
    const arrivals = transfers.filter(
      (t) => owners.has(t.to) && !ownSwaps.has(`${t.hash.toLowerCase()}:${t.to.toLowerCase()}`),
    );
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const moved = await runIn(tx, ADVANCE, [environment, network, after.toString(), toBlock.toString()]);
      // Another watcher moved the cursor first and told these.
      if (moved.length === 0) return 0;
      for (const arrival of arrivals)
        await recordEvent(
          tx,
          {
            type: 'transaction.completed',
            userId: owners.get(arrival.to)!,
            environment,
            data: {
              type: 'CRYPTO_DEPOSIT',
              status: 'COMPLETED',
              reference: arrival.reference,
              hash: arrival.hash,
              network,
              chainId: EVM_NETWORK_SPECS[network].chainId,
              asset: arrival.asset,
              token: arrival.token,
              amount: formatUnits(arrival.amountRaw, arrival.decimals),
              amountRaw: arrival.amountRaw.toString(),
              from: arrival.from,
              to: arrival.to,
              block: arrival.block.toString(),
              txUrl: evmTxUrl(arrival.hash, network, environment),
              updatedAt: now.toISOString(),
            },
          } as never,
          now,
        );
      return arrivals.length;
    });
  }
}
