import type { OfframpOrderRow } from '../offramp/offramp-order.js';
import type { SolanaTransferRow } from '../solana/transfer-store.js';
import type { WalletTransactionRow } from '../wallet/transaction-store.js';

/**
 * One money movement of a user, whatever moved: an NGN wallet transaction (a deposit, payout,
 * bill or transfer), an outgoing Solana transaction (a transfer or a swap) or an offramp order.
 * Its id names the table it lives in, `wallet:<uuid>`, `solana:<uuid>` or `offramp:<uuid>`, so it
 * can be looked up again without searching every table.
 */
export type ActivitySource = 'wallet' | 'solana' | 'offramp';

export const ACTIVITY_KINDS = [
  'DEPOSIT',
  'PAYOUT',
  'BILL',
  'TRANSFER_IN',
  'TRANSFER_OUT',
  'CHAIN_TRANSFER',
  'SWAP',
  'OFFRAMP',
] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];
export type ActivityStatus = 'PENDING' | 'COMPLETED' | 'FAILED';

export type Activity =
  | (ActivityCommon & { source: 'wallet'; row: WalletTransactionRow })
  | (ActivityCommon & { source: 'solana'; row: SolanaTransferRow })
  | (ActivityCommon & { source: 'offramp'; row: OfframpOrderRow });

interface ActivityCommon {
  id: string;
  kind: ActivityKind;
  status: ActivityStatus;
  reference: string;
  createdAt: Date;
  updatedAt: Date;
}

export const activityKey = (source: ActivitySource, rowId: string) => `${source}:${rowId}`;

export function parseActivityKey(key: string): { source: ActivitySource; rowId: string } | undefined {
  const match = /^(wallet|solana|offramp):(.+)$/.exec(key);
  return match ? { source: match[1] as ActivitySource, rowId: match[2]! } : undefined;
}

const WALLET_KINDS: Record<WalletTransactionRow['type'], ActivityKind> = {
  DEPOSIT: 'DEPOSIT',
  WITHDRAWAL: 'PAYOUT',
  BILL: 'BILL',
  TRANSFER_IN: 'TRANSFER_IN',
  TRANSFER_OUT: 'TRANSFER_OUT',
};

export const SOLANA_STATUS: Record<SolanaTransferRow['status'], ActivityStatus> = {
  pending: 'PENDING',
  confirmed: 'COMPLETED',
  failed: 'FAILED',
  replaced: 'FAILED',
};

/** An offramp order is settled only when its fiat arrived, or failed, expired or was refunded. */
export const OFFRAMP_STATUS: Record<OfframpOrderRow['status'], ActivityStatus> = {
  initiated: 'PENDING',
  deposit_received: 'PENDING',
  processing: 'PENDING',
  fiat_sent: 'PENDING',
  completed: 'COMPLETED',
  failed: 'FAILED',
  expired: 'FAILED',
  refunded: 'FAILED',
};

export function walletActivity(row: WalletTransactionRow): Activity {
  return {
    source: 'wallet',
    row,
    id: activityKey('wallet', row.id),
    kind: WALLET_KINDS[row.type],
    status: row.status,
    reference: row.reference,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function solanaActivity(row: SolanaTransferRow): Activity {
  return {
    source: 'solana',
    row,
    id: activityKey('solana', row.id),
    kind: row.kind === 'swap' ? 'SWAP' : 'CHAIN_TRANSFER',
    status: SOLANA_STATUS[row.status],
    reference: row.txHash,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function offrampActivity(row: OfframpOrderRow): Activity {
  return {
    source: 'offramp',
    row,
    id: activityKey('offramp', row.id),
    kind: 'OFFRAMP',
    status: OFFRAMP_STATUS[row.status],
    reference: row.reference,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
