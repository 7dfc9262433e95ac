import type { Environment } from '../auth/permissions.js';
import { badInput } from '../errors.js';
import type { ExchangeProvider } from './exchange-provider.js';
import type { SolanaNetwork } from './networks.js';
import { SOL, type TokenInfo } from './native-token.js';
import type { SolanaChains } from './solana-chains.js';

/** Well-known mainnet tokens: names and symbols without asking anyone. Others are read from the chain. */
const MAINNET_TOKENS: TokenInfo[] = [
  SOL,
  { address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', symbol: 'USDC', name: 'USD Coin', decimals: 6 },
  { address: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', symbol: 'USDT', name: 'USDT', decimals: 6 },
  { address: 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263', symbol: 'BONK', name: 'Bonk', decimals: 5 },
];

/** Token facts (symbol, name, decimals) and USD prices, per environment and network. */
export class TokenDirectory {
  constructor(
    private readonly chains: SolanaChains,
    private readonly exchange: (environment: Environment) => ExchangeProvider | undefined,
    /** The sandbox world's tokens, given by the sandbox's wiring (services.ts). */
    private readonly sandboxTokens: readonly TokenInfo[],
  ) {}

  known(environment: Environment): readonly TokenInfo[] {
    return environment === 'sandbox' ? this.sandboxTokens : MAINNET_TOKENS;
  }

  /** The token of a mint, or a 400 naming `field` when the address is not a mint on that network. */
  async info(environment: Environment, network: SolanaNetwork, mint: string, field: string): Promise<TokenInfo> {
    const known = this.known(environment).find((t) => t.address === mint);
    if (known) return known;
    const decimals = await this.chains.chainFor(environment, network).mintDecimals(mint);
    if (decimals === undefined) throw badInput(field, `${field} is not a token mint on ${network}.`);
    return { address: mint, symbol: `${mint.slice(0, 4)}…${mint.slice(-4)}`, name: 'Unlisted token', decimals };
  }

  /** USD prices where the provider knows one; a provider outage leaves them out rather than failing the read. */
  async usdPrices(environment: Environment, network: SolanaNetwork, mints: string[]): Promise<Map<string, number>> {
    try {
      return (await this.exchange(environment)?.usdPrices(network, mints)) ?? new Map();
    } catch {
      return new Map();
    }
  }
}
