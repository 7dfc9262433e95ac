import type { Caller } from '../users/user-directory.js';
import type { EvmBalanceView, EvmNetworkView, EvmPortfolioView, EvmReads } from './evm-reads.js';
import type { EvmSendView } from './evm-send-view.js';
import type { EvmSendInput, EvmTransfers } from './evm-transfers.js';

/**
 * The caller's EVM wallet as the graph reads it for the operations the spec names (the networks,
 * the native and ERC-20 balances, the portfolio, the native and token sends) and its address.
 * Bound once at start-up: to this gateway's custodial wallets and sandbox chains (service mode),
 * or to an upstream Partner Gateway at the route map's paths (facade mode,
 * facade/upstream-evm-wallet.ts). The wallet's transfer history is the service's alone.
 */
export interface EvmWalletDomain {
  address(caller: Caller): Promise<{ address: string }>;
  /** Every network with its native coin and tokens, contracts as deployed in the caller's environment. */
  networks(caller: Caller): Promise<EvmNetworkView[]>;
  nativeBalance(caller: Caller, network: string): Promise<EvmBalanceView>;
  tokenBalance(caller: Caller, network: string, token: string): Promise<EvmBalanceView>;
  portfolio(caller: Caller, network: string): Promise<EvmPortfolioView>;
  /** Sends the native coin; the caller's Idempotency-Key goes with it. */
  sendNative(
    caller: Caller,
    network: string,
    input: EvmSendInput,
    idempotencyKey: string | undefined,
  ): Promise<EvmSendView>;
  /** Sends an ERC-20 token; the caller's Idempotency-Key goes with it. */
  sendToken(
    caller: Caller,
    network: string,
    token: string,
    input: EvmSendInput,
    idempotencyKey: string | undefined,
  ): Promise<EvmSendView>;
}

/** The wallet as this gateway keeps it: its own keys, read from and sent on its own chains. */
export const localEvmWallet = (reads: EvmReads, transfers: EvmTransfers): EvmWalletDomain => ({
  address: ({ principal }) => reads.address(principal),
  networks: async ({ principal }) => reads.networks(principal.environment),
  nativeBalance: ({ principal }, network) => reads.nativeBalance(principal, network),
  tokenBalance: ({ principal }, network, token) => reads.tokenBalance(principal, network, token),
  portfolio: ({ principal }, network) => reads.portfolio(principal, network),
  sendNative: ({ principal }, network, input, key) => transfers.sendNative(principal, network, input, key),
  sendToken: ({ principal }, network, token, input, key) => transfers.sendToken(principal, network, token, input, key),
});
