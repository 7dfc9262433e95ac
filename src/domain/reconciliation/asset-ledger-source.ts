import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import type { Environment } from '../auth/permissions.js';
import { custodialAddresses } from './our-records.js';
import type { ReconciliationSource } from './sources.js';

/**
 * A chain network's custodial wallets as the chain holds them, as reconciliation of the asset
 * ledger needs them. A family supplies it (Solana's sandbox: solana/sandbox-ledger-balances.ts),
 * given here by the wiring, so reconciliation reads no family.
 */
export interface ChainWalletBalances {
  environment: Environment;
  family: string;
  network: string;
  /** Every custodial wallet's balance of every asset on the chain now, keyed `address asset`; zeros may be left out. */
  held(addresses: string[]): Promise<Map<string, bigint>>;
}

/** The ledger's figure for each wallet and asset: spendable plus held (a held send has not yet left the chain). */
async function ledgerFigures(db: Executor, of: ChainWalletBalances): Promise<Map<string, bigint>> {
  const rows = await queryRows<{ address: string; asset: string; total: string }>(
    db,
    sql`select address, asset, sum(balance)::text as total from asset_accounts
        where environment = ${of.environment}::environment and family = ${of.family} and network = ${of.network}
          and user_id is not null and code in ('wallet', 'holds')
        group by address, asset`,
  );
  return new Map(rows.map((r) => [`${r.address} ${r.asset}`, BigInt(r.total)]));
}

const same = (a: Map<string, bigint>, b: Map<string, bigint>) =>
  a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);

/**
 * The asset ledger against the chain: for every custodial wallet and asset of one network, what
 * the ledger says it holds (spendable plus held) against what the chain holds, compared as
 * balances (`balance_differs` names both figures). Where every movement posts in the chain's
 * commit (the sandbox) they agree to the base unit; a difference is a movement that bypassed the
 * ledger (or a posting the chain never ran). The two are read apart, so the ledger is read before
 * and after the chain until the two reads agree (nothing committed in between).
 */
export function assetLedgerSource(of: ChainWalletBalances): ReconciliationSource {
  return {
    provider: `${of.family}-${of.network}-asset-ledger`,
    environment: of.environment,
    async items(db, window) {
      const at = new Date((window.from.getTime() + window.to.getTime()) / 2);
      let ours = await ledgerFigures(db, of);
      // Custody's wallets and those the ledger knows: a wallet funded outside the ledger has no account, and is what this must find.
      const addresses = [
        ...new Set([
          ...(await custodialAddresses(db, of.environment)),
          ...[...ours.keys()].map((k) => k.split(' ')[0]!),
        ]),
      ];
      let theirs = await of.held(addresses);
      for (let attempt = 0; attempt < 5; attempt++) {
        const after = await ledgerFigures(db, of);
        if (same(ours, after)) break;
        ours = after;
        theirs = await of.held(addresses);
      }
      const record = (key: string, amount: bigint) => {
        const [address, asset] = key.split(' ') as [string, string];
        const reference = `asset-ledger:${of.network}:${address}:${asset}`;
        return { reference, providerRef: reference, amount, currency: asset, status: 'succeeded' as const, at };
      };
      return [
        {
          itemType: 'wallet_asset_balance',
          direction: 'out',
          clearing: false,
          compare: 'balances',
          ours: [...ours]
            .filter(([, v]) => v !== 0n)
            .map(([k, v]) => ({ ...record(k, v), itemType: 'wallet_asset_balance' })),
          theirs: [...theirs].filter(([, v]) => v !== 0n).map(([k, v]) => record(k, v)),
        },
      ];
    },
  };
}
