import { and, type Column, eq, gte, inArray, lt } from 'drizzle-orm';
import { billRecords } from '../../db/bills-schema.js';
import type { Executor } from '../../db/client.js';
import { offrampOrders } from '../../db/offramp-schema.js';
import { chainSends } from '../../db/chain-schema.js';
import { solanaWallets } from '../../db/solana-schema.js';
import { deposits, payouts } from '../../db/wallet-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { OurRecord } from './matcher.js';
import { type ListWindow, offrampRecordStatus, type RecordStatus } from './records.js';

/**
 * The gateway's side of each comparison: its provider-facing records of one provider in one
 * environment and window, each under the reference the provider knows it by.
 */

/** The columns every provider-facing table has that a day's comparison selects on. */
interface ProviderFacing {
  environment: Column;
  provider: Column;
  createdAt: Column;
}

/** One provider's records of one environment, created inside the window. */
const providerRecordsIn = (table: ProviderFacing, environment: Environment, provider: string, window: ListWindow) =>
  and(
    eq(table.environment, environment),
    eq(table.provider, provider),
    gte(table.createdAt, window.from),
    lt(table.createdAt, window.to),
  );

const completedIs = (status: string, done: string, failed: string): RecordStatus =>
  status === done ? 'succeeded' : status === failed ? 'failed' : 'pending';

/** Deposits: the provider knows them as `pgw-<id>`, or, arriving in a virtual account, by its own id. */
export async function ourDeposits(db: Executor, environment: Environment, provider: string, window: ListWindow) {
  const rows = await db
    .select()
    .from(deposits)
    .where(providerRecordsIn(deposits, environment, provider, window));
  return rows.map(ourDepositRecord);
}

/** A deposit as the provider knows it: `pgw-<id>`, or, arriving in a virtual account, by the provider's id. */
export function ourDepositRecord(d: typeof deposits.$inferSelect): OurRecord {
  return {
    itemType: 'deposit',
    reference: d.method === 'virtual_account' && d.providerRef ? d.providerRef : `pgw-${d.id}`,
    providerRef: d.providerRef,
    amount: d.amount,
    currency: d.currency,
    status: completedIs(d.status, 'completed', 'failed'),
    at: d.createdAt,
  };
}

/** Payouts, sent as `pgw-<id>`; the amount the beneficiary receives (the fee stays with the gateway). */
export async function ourPayouts(db: Executor, environment: Environment, provider: string, window: ListWindow) {
  const rows = await db
    .select()
    .from(payouts)
    .where(providerRecordsIn(payouts, environment, provider, window));
  return rows.map(
    (p): OurRecord => ({
      itemType: 'payout',
      reference: `pgw-${p.id}`,
      providerRef: p.providerRef,
      amount: p.amount,
      currency: 'NGN',
      status: completedIs(p.status, 'completed', 'failed'),
      at: p.createdAt,
    }),
  );
}

/** Bill payments, sent as `pgw-<id>` (unique across users; the caller's reference is per user). */
export async function ourBills(db: Executor, environment: Environment, provider: string, window: ListWindow) {
  const rows = await db
    .select()
    .from(billRecords)
    .where(providerRecordsIn(billRecords, environment, provider, window));
  return rows.map(
    (b): OurRecord => ({
      itemType: 'bill',
      reference: `pgw-${b.id}`,
      providerRef: b.txRef,
      amount: b.amount,
      currency: 'NGN',
      status: completedIs(b.status, 'SUCCESS', 'FAILED'),
      at: b.createdAt,
    }),
  );
}

/** Offramp orders, by the provider's order id; amounts in the token's base units. */
export async function ourOfframpOrders(db: Executor, environment: Environment, provider: string, window: ListWindow) {
  const rows = await db
    .select()
    .from(offrampOrders)
    .where(providerRecordsIn(offrampOrders, environment, provider, window));
  return rows.map(
    (o): OurRecord => ({
      itemType: 'offramp_order',
      reference: o.providerOrderId,
      providerRef: o.providerOrderId,
      amount: o.amountRaw,
      currency: `${o.token}@${o.network}`,
      status: offrampRecordStatus(o.status),
      at: o.createdAt,
    }),
  );
}

/** Custodial wallets of an environment, by address: whose transactions on chain the gateway must know. */
export async function custodialAddresses(db: Executor, environment: Environment): Promise<string[]> {
  const rows = await db
    .select({ address: solanaWallets.address })
    .from(solanaWallets)
    .where(eq(solanaWallets.environment, environment));
  return rows.map((r) => r.address);
}

/** Transactions the gateway signed for those wallets on one network, by signature. */
export async function ourChainTransfers(
  db: Executor,
  environment: Environment,
  network: string,
  addresses: string[],
  window: ListWindow,
) {
  if (addresses.length === 0) return [];
  const rows = await db
    .select()
    .from(chainSends)
    .where(
      and(
        eq(chainSends.family, 'solana'),
        eq(chainSends.environment, environment),
        eq(chainSends.network, network),
        inArray(chainSends.fromAddress, addresses),
        gte(chainSends.createdAt, window.from),
        lt(chainSends.createdAt, window.to),
      ),
    );
  return rows.map(
    (t): OurRecord => ({
      itemType: 'chain_transfer',
      reference: t.txHash,
      providerRef: t.txHash,
      amount: t.amountRaw,
      currency: t.asset ?? 'SOL',
      // A replaced send never lands: as failed as one the chain refused.
      status: t.status === 'confirmed' ? 'succeeded' : t.status === 'pending' ? 'pending' : 'failed',
      at: t.createdAt,
    }),
  );
}
