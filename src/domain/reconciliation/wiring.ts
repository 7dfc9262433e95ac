import type { Environment } from '../auth/permissions.js';
import type { BillsProvider } from '../bills/bills-provider.js';
import type { OfframpProvider } from '../offramp/offramp-provider.js';
import type { PaymentsProvider } from '../payments/payments-provider.js';
import type { SolanaChain } from '../solana/chain.js';
import { type MarketMakers, marketMakerSource } from './balances.js';
import { assetLedgerSource, type ChainWalletBalances } from './asset-ledger-source.js';
import { billsSource, chainSource, offrampSource, paymentsSource, type ReconciliationSource } from './sources.js';

/**
 * The sources of every environment from the configured adapters. An unconfigured production
 * provider is left out (nothing to reconcile); the sandbox's providers are in (they list what they
 * recorded in this process). Production chains are the RPC networks configured; the sandbox's
 * market makers are every sandbox network's (production has none), given by the family's sandbox.
 */
export function reconciliationSources(adapters: {
  payments: Record<Environment, PaymentsProvider>;
  bills: Record<Environment, BillsProvider | undefined>;
  offramp: { production: OfframpProvider | undefined };
  chains: SolanaChain[];
  /** The sandbox exchanges' market makers, one per family and network: their balances. */
  sandboxMarketMakers?: MarketMakers[];
  /** Custodial wallets on chains whose every movement posts to the asset ledger: ledger against chain. */
  ledgerChains?: ChainWalletBalances[];
}): ReconciliationSource[] {
  const sources: Array<ReconciliationSource | undefined> = [];
  for (const environment of ['sandbox', 'production'] as const) {
    const payments = adapters.payments[environment];
    if (payments.name !== 'unconfigured') sources.push(paymentsSource(environment, payments));
    const bills = adapters.bills[environment];
    if (bills) sources.push(billsSource(environment, bills));
  }
  if (adapters.offramp.production) sources.push(offrampSource('production', adapters.offramp.production));
  for (const chain of adapters.chains) sources.push(chainSource('production', chain));
  for (const makers of adapters.sandboxMarketMakers ?? []) sources.push(marketMakerSource(makers));
  for (const chain of adapters.ledgerChains ?? []) sources.push(assetLedgerSource(chain));
  return sources.filter((s): s is ReconciliationSource => s !== undefined);
}
