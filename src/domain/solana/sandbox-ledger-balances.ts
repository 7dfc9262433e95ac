import { address as kitAddress } from '@solana/kit';
import { TOKEN_PROGRAM_ID } from '@solana/spl-token';
import type { ChainWalletBalances } from '../reconciliation/asset-ledger-source.js';
import { lamportsAt } from './sandbox-accounts.js';
import type { SandboxChainStore } from './sandbox-chain-store.js';
import type { SolanaNetwork } from './networks.js';
import { SOL_MINT } from './native-token.js';
import { parseTokenAccount } from './token-accounts.js';
import { SOLANA } from './transfer-store.js';

/**
 * A sandbox network's custodial wallets as the chain holds them, for reconciliation of the asset
 * ledger: each wallet's lamports (SOL) and, per mint, what every token account it owns holds (the
 * same figures sandbox-ledger.ts posts the moves of). One read of the chain for all wallets.
 */
export function sandboxLedgerBalances(store: SandboxChainStore, network: SolanaNetwork): ChainWalletBalances {
  return {
    environment: 'sandbox',
    family: SOLANA,
    network,
    held(addresses) {
      const wanted = new Set(addresses);
      return store.read(network, (svm) => {
        const held = new Map<string, bigint>();
        for (const owner of wanted) held.set(`${owner} ${SOL_MINT}`, lamportsAt(svm, owner));
        for (const account of svm.getProgramAccounts(kitAddress(TOKEN_PROGRAM_ID.toBase58()))) {
          if (account.data.length !== 165) continue;
          const token = parseTokenAccount(account.data);
          if (!wanted.has(token.owner)) continue;
          const key = `${token.owner} ${token.mint}`;
          held.set(key, (held.get(key) ?? 0n) + token.amount);
        }
        return held;
      });
    },
  };
}
