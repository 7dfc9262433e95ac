import { and, eq, sql } from 'drizzle-orm';
import type { Database, Tx } from '../../db/client.js';
import { queryRows } from '../../db/client.js';
import { solanaWatchCursors } from '../../db/solana-schema.js';
import type { Clock } from '../clock.js';
import type { Environment } from '../auth/permissions.js';
import type { Arrival } from './chain.js';
import type { SolanaNetwork } from './networks.js';
import type { RpcChain } from './rpc-chain.js';

export interface WatchOptions {
  /** How often every production wallet is checked for a missing cursor (new wallets get theirs when created). */
  seedEveryMs: number;
  /** How often each address is looked at. */
  everyMs: number;
  /** A poller's claim on an address; one that dies loses it after this. */
  leaseMs: number;
  batch: number;
}

/**
 * Production incoming transfers: each custodial wallet, and each of its token accounts, is asked
 * for signatures newer than the last one seen, and arrivals become `transaction.completed` events
 * in the transaction that moves the cursor, so each is told once. Addresses are claimed with a
 * lease, so any number of instances share the work. (Sandbox chains tell arrivals as they execute.)
 */
export class IncomingWatch {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly chains: Partial<Record<SolanaNetwork, RpcChain>>,
    private readonly record: (tx: Tx, network: SolanaNetwork, arrivals: Arrival[]) => Promise<void>,
    private readonly options: WatchOptions = { seedEveryMs: 10 * 60_000, everyMs: 30_000, leaseMs: 60_000, batch: 50 },
  ) {}

  private seededAt = Number.NEGATIVE_INFINITY;

  /**
   * Told of each custodial wallet created: a production wallet is watched from its creation on
   * (sandbox chains tell their arrivals as they execute).
   */
  async walletCreated(wallet: { environment: Environment; address: string }): Promise<void> {
    if (wallet.environment === 'production') await this.watchWallet(wallet.address);
  }

  /** Watches a new production wallet on every configured network, from its creation on. */
  async watchWallet(address: string): Promise<void> {
    const networks = Object.keys(this.chains);
    if (networks.length === 0) return;
    await this.db
      .insert(solanaWatchCursors)
      .values(networks.map((network) => ({ address, network, walletAddress: address })))
      .onConflictDoNothing();
  }

  get active(): boolean {
    return Object.keys(this.chains).length > 0;
  }

  /** One round: returns how many addresses were looked at. */
  async poll(): Promise<number> {
    const networks = Object.keys(this.chains) as SolanaNetwork[];
    if (networks.length === 0) return 0;
    const now = this.clock.now();
    // A pass over every production wallet is the safety net (wallets made before a network was
    // configured, or whose cursors were not written): first round, then now and then, not every round.
    if (now.getTime() - this.seededAt >= this.options.seedEveryMs) {
      for (const network of networks) {
        await this.db.execute(sql`
          insert into solana_watch_cursors (address, network, wallet_address)
          select address, ${network}, address from solana_wallets where environment = 'production'
          on conflict do nothing`);
      }
      this.seededAt = now.getTime();
    }
    const due = new Date(now.getTime() - this.options.everyMs);
    const claimed = await queryRows<{
      address: string;
      network: SolanaNetwork;
      wallet_address: string;
      last_signature: string | null;
    }>(
      this.db,
      sql`
        update solana_watch_cursors set locked_until = ${new Date(now.getTime() + this.options.leaseMs).toISOString()}::timestamptz
        where (address, network) in (
          select address, network from solana_watch_cursors
          where (locked_until is null or locked_until < ${now.toISOString()}::timestamptz)
            and (checked_at is null or checked_at < ${due.toISOString()}::timestamptz)
          order by checked_at nulls first
          limit ${this.options.batch}
          for update skip locked)
        returning address, network, wallet_address, last_signature`,
    );
    for (const cursor of claimed) {
      const chain = this.chains[cursor.network];
      const where = and(eq(solanaWatchCursors.address, cursor.address), eq(solanaWatchCursors.network, cursor.network));
      try {
        if (!chain) continue;
        if (cursor.address === cursor.wallet_address)
          await this.watchTokenAccounts(chain, cursor.wallet_address, cursor.network);
        const { arrivals, newest } = await chain.arrivalsAt(
          cursor.address,
          cursor.wallet_address,
          cursor.last_signature ?? undefined,
        );
        await this.db.transaction(async (tx) => {
          if (arrivals.length > 0) await this.record(tx, cursor.network, arrivals);
          await tx
            .update(solanaWatchCursors)
            .set({ lastSignature: newest ?? null, checkedAt: this.clock.now(), lockedUntil: null })
            .where(where);
        });
      } catch {
        // The node failed this time: let the address go, to be asked again next round.
        await this.db.update(solanaWatchCursors).set({ lockedUntil: null }).where(where);
      }
    }
    return claimed.length;
  }

  private async watchTokenAccounts(chain: RpcChain, wallet: string, network: SolanaNetwork): Promise<void> {
    const holdings = await chain.tokenHoldings(wallet);
    if (holdings.length === 0) return;
    await this.db
      .insert(solanaWatchCursors)
      .values(holdings.map((h) => ({ address: h.account, network, walletAddress: wallet })))
      .onConflictDoNothing();
  }
}
