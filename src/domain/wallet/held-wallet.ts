import type { HeldWallet } from '../money/held-kind.js';
import { transactionSettleEvent } from './transaction-lifecycle.js';
import { recordTransactionProgress } from './wallet-events.js';
import { settleHeldTransaction } from './wallet-transitions.js';

/**
 * The wallet's half of every held operation (money/held-operation.ts): the PENDING wallet
 * transaction a hold pays for settles with its operation (TRANSACTION's move and event), or shows
 * the stage a kept hold's operation reached.
 */
export const HELD_WALLET: HeldWallet = {
  settle: settleHeldTransaction,
  progress: recordTransactionProgress,
  settleEvent: transactionSettleEvent,
};
