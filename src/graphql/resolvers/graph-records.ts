import type { Activity } from '../../domain/activity/activity.js';
import { walletActivity } from '../../domain/activity/activity.js';
import { toOfframpOrder } from '../../domain/offramp/offramp-order.js';
import { transferView } from '../../domain/solana/transfer-view.js';
import type { WalletTransactionRow } from '../../domain/wallet/transaction-store.js';
import type { Loaders } from '../loaders.js';

/** An object with the GraphQL type it is, for interfaces and unions (a copy: loaded rows are shared). */
export const typed = <T extends object>(typeName: string, value: T) => ({ ...value, __typename: typeName });

/** The deposit, payout or bill record a wallet transaction records; a transfer records itself. */
export async function recordOfWalletTransaction(loaders: Loaders, row: WalletTransactionRow) {
  const found =
    row.type === 'DEPOSIT'
      ? typedOrNull('Deposit', await loaders.depositByReference.load(row.reference))
      : row.type === 'WITHDRAWAL'
        ? typedOrNull('Payout', await loaders.payoutByReference.load(row.reference))
        : row.type === 'BILL'
          ? typedOrNull('BillRecord', await loaders.billRecordByReference.load(row.reference))
          : null;
  return found ?? typed('WalletTransaction', row);
}

/** What a transaction records, as its GraphQL type. */
export function recordOfActivity(loaders: Loaders, activity: Activity) {
  switch (activity.source) {
    case 'wallet':
      return recordOfWalletTransaction(loaders, activity.row);
    case 'solana':
      return typed('SolanaTransfer', transferView(activity.row));
    case 'offramp':
      return typed('OfframpOrder', toOfframpOrder(activity.row));
  }
}

const typedOrNull = <T extends object>(typeName: string, value: T | null) => (value ? typed(typeName, value) : null);

/** The wallet transaction of a deposit, payout or bill (by its reference and kind), as a transaction. */
export async function walletActivityOf(
  loaders: Loaders,
  reference: string,
  type: WalletTransactionRow['type'],
): Promise<Activity | null> {
  const row = await loaders.walletTransactionByReference.load(reference);
  return row && row.type === type ? walletActivity(row) : null;
}
