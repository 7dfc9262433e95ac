import type { Caller } from '../users/user-directory.js';
import type { CustodialWallets, SolanaWalletAddress } from './custodial-wallets.js';
import type { SolanaSend } from './solana-sends.js';
import type { SolanaTransfers, TransferInput } from './transfer-service.js';

/**
 * The caller's Solana wallet as the graph reads it where the spec shows a path (its address, and
 * an SPL token transfer).
 * Bound once at start-up: to this gateway's custodial wallets (service mode) or to the upstream
 * REST v1 deployment (facade mode, facade/upstream-solana-wallet.ts).
 */
export interface SolanaWalletDomain {
  address(caller: Caller): Promise<SolanaWalletAddress>;
  /** Sends an SPL token; the caller's Idempotency-Key goes with it. */
  transferToken(caller: Caller, input: TransferInput, idempotencyKey: string | undefined): Promise<SolanaSend>;
}

/** The wallet as this gateway keeps it: created on first use. */
export const localSolanaWallet = (wallets: CustodialWallets, transfers: SolanaTransfers): SolanaWalletDomain => ({
  address: async ({ principal }) => ({ address: (await wallets.walletOf(principal)).address }),
  transferToken: ({ principal }, input, idempotencyKey) => transfers.transferToken(principal, input, idempotencyKey),
});
