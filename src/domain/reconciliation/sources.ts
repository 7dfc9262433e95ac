import type { Executor } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import type { BillsProvider } from '../bills/bills-provider.js';
import type { OfframpProvider } from '../offramp/offramp-provider.js';
import type { PaymentsProvider } from '../payments/payments-provider.js';
import type { SolanaChain } from '../solana/chain.js';
import type { BreakKind, OurRecord } from './matcher.js';
import { settlementItems } from './settlements.js';
import {
  custodialAddresses,
  ourBills,
  ourChainTransfers,
  ourDeposits,
  ourOfframpOrders,
  ourPayouts,
} from './our-records.js';
import type { ListWindow, ProviderRecord } from './records.js';

/** One kind of item of one provider, both sides listed for the same window. */
export interface SourceItems {
  itemType: string;
  /** Money into the gateway (deposits) or out of it: the sign of its clearing. */
  direction: 'in' | 'out';
  /** False when amounts are in several units (tokens on chain) and cannot be summed into a clearing balance. */
  clearing: boolean;
  /** `balances`: one record per wallet and token on each side, compared as of the run (balances.ts). */
  compare?: 'movements' | 'balances';
  /** The kind a differing figure is, when compared as balances (default `balance_differs`). */
  breakKind?: BreakKind;
  ours: OurRecord[];
  theirs: ProviderRecord[];
}

/**
 * A provider reconciliation reads: its label (metrics, breaks), the environment whose records it
 * holds, and how to list both sides. Built from the same adapters the services use.
 */
export interface ReconciliationSource {
  provider: string;
  environment: Environment;
  items(db: Executor, window: ListWindow, settlement?: SettlementContext): Promise<SourceItems[]>;
}

/** The provider's settlement window, and whether it has passed since the day's end. */
export interface SettlementContext {
  hours: number;
  due: boolean;
}

/**
 * Flutterwave (or the sandbox) as the NGN payments provider: collections against deposits, transfers
 * against payouts, and, where it settles (Flutterwave), settlements against collections: those made
 * from the day until its settlement window has passed (settlements.ts).
 */
export function paymentsSource(environment: Environment, provider: PaymentsProvider): ReconciliationSource {
  const listSettlements = provider.listSettlements?.bind(provider);
  return {
    provider: provider.name,
    environment,
    async items(db, window, settlement = { hours: 0, due: false }) {
      const [collections, transfers, settlements] = await Promise.all([
        provider.listCollections(window),
        provider.listTransfers(window),
        listSettlements?.({
          from: window.from,
          to: new Date(window.to.getTime() + settlement.hours * 3_600_000 + 86_400_000),
        }),
      ]);
      const deposits = await ourDeposits(db, environment, provider.name, window);
      return [
        {
          itemType: 'deposit',
          direction: 'in',
          clearing: true,
          ours: deposits,
          theirs: collections,
        },
        {
          itemType: 'payout',
          direction: 'out',
          clearing: true,
          ours: await ourPayouts(db, environment, provider.name, window),
          theirs: transfers,
        },
        ...(settlements
          ? await settlementItems(db, environment, provider.name, deposits, settlements, settlement.due)
          : []),
      ];
    },
  };
}

/** The bills provider's transactions against bill payments. */
export function billsSource(environment: Environment, provider: BillsProvider): ReconciliationSource {
  return {
    provider: `${provider.name}-bills`,
    environment,
    async items(db, window) {
      const theirs = await provider.listPayments(window);
      return [
        {
          itemType: 'bill',
          direction: 'out',
          clearing: true,
          ours: await ourBills(db, environment, provider.name, window),
          theirs,
        },
      ];
    },
  };
}

/** The offramp provider's orders against offramp orders (token base units, so no NGN clearing). */
export function offrampSource(environment: Environment, provider: OfframpProvider): ReconciliationSource | undefined {
  const list = provider.listOrders?.bind(provider);
  if (!list) return undefined;
  return {
    provider: provider.name,
    environment,
    async items(db, window) {
      const theirs = await list(window);
      return [
        {
          itemType: 'offramp_order',
          direction: 'out',
          clearing: false,
          ours: await ourOfframpOrders(db, environment, provider.name, window),
          theirs,
        },
      ];
    },
  };
}

/**
 * A Solana network: every transaction a custodial wallet signed, as the chain lists it, against
 * the transfers and swaps the gateway signed. One the gateway did not sign is a key in someone
 * else's hands, or a lost record.
 */
export function chainSource(environment: Environment, chain: SolanaChain): ReconciliationSource | undefined {
  const list = chain.signedBy?.bind(chain);
  if (!list) return undefined;
  return {
    provider: `solana-${chain.network}`,
    environment,
    async items(db, window) {
      const addresses = await custodialAddresses(db, environment);
      const theirs: ProviderRecord[] = [];
      for (const address of addresses) theirs.push(...(await list(address, window)));
      return [
        {
          itemType: 'chain_transfer',
          direction: 'out',
          clearing: false,
          ours: await ourChainTransfers(db, environment, chain.network, addresses, window),
          theirs,
        },
      ];
    },
  };
}
