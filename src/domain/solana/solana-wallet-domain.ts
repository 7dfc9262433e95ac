import type { Caller } from '../users/user-directory.js';
import type { CustodialWallets, SolanaWalletAddress } from './custodial-wallets.js';

/**
 * The caller's Solana wallet as the graph reads it where the spec shows a path (its address).
 * Bound once at start-up: to this gateway's custodial wallets (service mode) or to the upstream
 * REST v1 deployment (facade mode, facade/upstream-solana-wallet.ts).
 */
export interface SolanaWalletDomain {
  address(caller: Caller): Promise<SolanaWalletAddress>;
}

/** The wallet as this gateway keeps it: created on first use. */
export const localSolanaWallet = (wallets: CustodialWallets): SolanaWalletDomain => ({
  address: async ({ principal }) => ({ address: (await wallets.walletOf(principal)).address }),
});
