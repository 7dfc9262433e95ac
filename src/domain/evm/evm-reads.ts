import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import type { EvmChains } from './evm-chains.js';
import { type EvmAmount, evmAmount } from './evm-amounts.js';
import type { EvmWallets } from './evm-wallets.js';
import { checkEvmNetwork, checkEvmToken, EVM_NETWORK_SPECS, EVM_NETWORKS, type EvmNetwork } from './networks.js';

/** What a wallet holds of one asset on one network. */
export interface EvmBalanceView extends EvmAmount {
  network: EvmNetwork;
  address: string;
  /** The native coin's symbol, or the token's. */
  symbol: string;
  /** The ERC-20 contract; null for the native coin. */
  token: string | null;
  decimals: number;
}

export interface EvmPortfolioView {
  address: string;
  network: EvmNetwork;
  chainId: number;
  native: EvmBalanceView;
  /** Every token the network supports, held or not. */
  tokens: EvmBalanceView[];
}

export interface EvmNetworkView {
  id: EvmNetwork;
  chainId: number;
  name: string;
  native: { symbol: string; name: string; decimals: number };
  explorer: string;
  dataFee: boolean;
  tokens: { address: string; symbol: string; name: string; decimals: number; wrapsNative: boolean }[];
}

/** The EVM wallet's reads: its address, the networks served, balances and portfolio (the chain's figures). */
export class EvmReads {
  constructor(
    private readonly wallets: EvmWallets,
    private readonly chains: EvmChains,
  ) {}

  async address(principal: Principal): Promise<{ address: string }> {
    return { address: (await this.wallets.walletOf(principal)).address };
  }

  /** Every network with its native coin and tokens, each token by its contract in the caller's environment. */
  networks(environment: Environment): EvmNetworkView[] {
    return EVM_NETWORKS.map((id) => {
      const spec = EVM_NETWORK_SPECS[id];
      return {
        id,
        chainId: spec.chainId,
        name: spec.name,
        native: { ...spec.native },
        explorer: spec.explorer,
        dataFee: spec.dataFee,
        tokens: spec.tokens.map((token) => ({
          address: this.chains.tokenContract(environment, id, token),
          symbol: token.symbol,
          name: token.name,
          decimals: token.decimals,
          wrapsNative: token.wrapsNative === true,
        })),
      };
    });
  }

  async nativeBalance(principal: Principal, networkArg: unknown): Promise<EvmBalanceView> {
    const network = checkEvmNetwork(networkArg as string);
    const chain = this.chains.chainFor(principal.environment, network);
    const { address } = await this.wallets.walletOf(principal);
    const coin = EVM_NETWORK_SPECS[network].native;
    return {
      network,
      address,
      symbol: coin.symbol,
      token: null,
      decimals: coin.decimals,
      ...evmAmount(await chain.nativeBalance(address), coin.decimals),
    };
  }

  async tokenBalance(principal: Principal, networkArg: unknown, tokenArg: unknown): Promise<EvmBalanceView> {
    const network = checkEvmNetwork(networkArg as string);
    const token = checkEvmToken(network, tokenArg as string);
    const chain = this.chains.chainFor(principal.environment, network);
    const contract = this.chains.tokenContract(principal.environment, network, token);
    const { address } = await this.wallets.walletOf(principal);
    return {
      network,
      address,
      symbol: token.symbol,
      token: contract,
      decimals: token.decimals,
      ...evmAmount(await chain.tokenBalance(address, contract), token.decimals),
    };
  }

  async portfolio(principal: Principal, networkArg: unknown): Promise<EvmPortfolioView> {
    const network = checkEvmNetwork(networkArg as string);
    const [native, ...tokens] = await Promise.all([
      this.nativeBalance(principal, network),
      ...EVM_NETWORK_SPECS[network].tokens.map((token) => this.tokenBalance(principal, network, token.symbol)),
    ]);
    return { address: native!.address, network, chainId: EVM_NETWORK_SPECS[network].chainId, native: native!, tokens };
  }
}
