import { BILL } from './bills/bill-lifecycle.js';
import { OFFRAMP_ORDER } from './offramp/order-lifecycle.js';
import { CHAIN_SEND, SWAP } from './solana/chain-sends.js';
import { DEPOSIT } from './wallet/deposit-lifecycle.js';
import { PAYOUT } from './wallet/payout-lifecycle.js';
import { TRANSACTION } from './wallet/transaction-lifecycle.js';

/**
 * Every value-moving operation's state table, each written beside its domain: the list retention
 * reads to know each kind's final statuses. A registry of domains, so money/ and lifecycle/ never
 * import it.
 */
export const LIFECYCLES = [DEPOSIT, PAYOUT, BILL, TRANSACTION, OFFRAMP_ORDER, CHAIN_SEND, SWAP] as const;
