import type { Executor } from '../../db/client.js';
import { assetLedger } from '../assets/asset-ledger.js';
import type { Principal } from '../auth/principal.js';
import type { SolanaChain, TokenHolding } from './chain.js';
import type { CustodialWallets } from './custodial-wallets.js';
import { checkNetwork, type SolanaNetwork } from './networks.js';
import { SOL } from './native-token.js';
import type { SolanaChains } from './solana-chains.js';
import { checkAddress, decimalFromRaw } from './token-amounts.js';
import type { TokenDirectory } from './token-directory.js';
import { SOLANA } from './transfer-store.js';

export interface TokenBalance {
  mint: string;
  symbol: string;
  name: string;
  decimals: number;
  /** In token units, as a decimal string. */
  amount: string;
  amountRaw: bigint;
  /** Null where no price is known. */
  usdValue: number | null;
}

export interface SolanaPortfolioView {
  address: string;
  network: SolanaNetwork;
  sol: TokenBalance;
  tokens: TokenBalance[];
  /** The sum of the priced holdings. */
  totalUsdValue: number;
}

const usd = (amountRaw: bigint, decimals: number, price: number | undefined) =>
  price === undefined ? null : Math.round((Number(amountRaw) / 10 ** decimals) * price * 100) / 100;

/** What a custodial wallet holds on a network: SOL, every token account, and their USD value where priced. */
export class SolanaPortfolio {
  constructor(
    private readonly wallets: CustodialWallets,
    private readonly chains: SolanaChains,
    private readonly tokens: TokenDirectory,
    /** Where the asset ledger is read; without it, balances are the chain's. */
    private readonly db?: Executor,
  ) {}

  /**
   * A wallet's lamports and token holdings. Where every movement posts to the asset ledger (the
   * sandbox's chains), the ledger's: spendable plus held, which is what the chain holds
   * (reconciliation compares the two); elsewhere the chain's, which the ledger only learns by
   * observation. The chain still lists which token accounts exist (one with nothing in it too).
   */
  private async holdings(
    principal: Principal,
    chain: SolanaChain,
    network: SolanaNetwork,
    owner: string,
    mints?: string[],
  ): Promise<{ lamports: bigint; holdings: TokenHolding[] }> {
    const [lamports, listed] = await Promise.all([
      chain.lamports(owner),
      mints?.length === 0 ? Promise.resolve([] as TokenHolding[]) : chain.tokenHoldings(owner),
    ]);
    if (!this.db || !chain.postsEveryMovement) return { lamports, holdings: listed };
    const assets = [SOL.address, ...new Set(listed.map((h) => h.mint))];
    const figures = await assetLedger.balances(
      this.db,
      { environment: principal.environment, family: SOLANA, network },
      principal.userId,
      assets,
    );
    // An asset the ledger has never seen for this wallet (a wallet older than the ledger, until its
    // first send opens it) is shown as the chain has it.
    const onChain = (asset: string) =>
      asset === SOL.address
        ? lamports
        : listed.filter((h) => h.mint === asset).reduce((sum, h) => sum + h.amountRaw, 0n);
    const total = (asset: string) => {
      const f = figures.get(asset)!;
      return f.known ? f.available + f.held : onChain(asset);
    };
    // One figure per mint: a mint's first account carries the ledger's total, any other none.
    const seen = new Set<string>();
    const holdings = listed.map((h) => {
      const first = !seen.has(h.mint);
      seen.add(h.mint);
      return { ...h, amountRaw: first ? total(h.mint) : 0n };
    });
    return { lamports: total(SOL.address), holdings };
  }

  async portfolio(principal: Principal, networkName?: string | null): Promise<SolanaPortfolioView> {
    const network = checkNetwork(networkName);
    const wallet = await this.wallets.walletOf(principal);
    const chain = this.chains.chainFor(principal.environment, network);
    const { lamports, holdings } = await this.holdings(principal, chain, network, wallet.address);
    const prices = await this.tokens.usdPrices(principal.environment, network, [
      SOL.address,
      ...holdings.map((h) => h.mint),
    ]);
    // Listed by symbol, then mint: the same order whatever the chain returned.
    const tokens = await Promise.all(
      holdings.map(async (h) => {
        const info = await this.tokens.info(principal.environment, network, h.mint, 'mint');
        return {
          mint: h.mint,
          symbol: info.symbol,
          name: info.name,
          decimals: h.decimals,
          amount: decimalFromRaw(h.amountRaw, h.decimals),
          amountRaw: h.amountRaw,
          usdValue: usd(h.amountRaw, h.decimals, prices.get(h.mint)),
        };
      }),
    ).then((list) => list.sort((a, b) => a.symbol.localeCompare(b.symbol) || a.mint.localeCompare(b.mint)));
    const sol: TokenBalance = {
      mint: SOL.address,
      symbol: 'SOL',
      name: SOL.name,
      decimals: 9,
      amount: decimalFromRaw(lamports, 9),
      amountRaw: lamports,
      usdValue: usd(lamports, 9, prices.get(SOL.address)),
    };
    const totalUsdValue = Math.round([sol, ...tokens].reduce((sum, t) => sum + (t.usdValue ?? 0), 0) * 100) / 100;
    return { address: wallet.address, network, sol, tokens, totalUsdValue };
  }

  /** SOL alone: one balance read and one price, not the whole portfolio. */
  async solBalance(
    principal: Principal,
    networkName?: string | null,
  ): Promise<TokenBalance & { address: string; network: SolanaNetwork }> {
    const network = checkNetwork(networkName);
    const wallet = await this.wallets.walletOf(principal);
    const chain = this.chains.chainFor(principal.environment, network);
    const [{ lamports }, prices] = await Promise.all([
      this.holdings(principal, chain, network, wallet.address, []),
      this.tokens.usdPrices(principal.environment, network, [SOL.address]),
    ]);
    return {
      mint: SOL.address,
      symbol: 'SOL',
      name: SOL.name,
      decimals: 9,
      amount: decimalFromRaw(lamports, 9),
      amountRaw: lamports,
      usdValue: usd(lamports, 9, prices.get(SOL.address)),
      address: wallet.address,
      network,
    };
  }

  /** One token's balance over all the wallet's accounts of that mint; none is zero. */
  async tokenBalance(
    principal: Principal,
    mintAddress: string,
    networkName?: string | null,
  ): Promise<TokenBalance & { address: string; network: SolanaNetwork }> {
    const mint = checkAddress(mintAddress, 'mint').toBase58();
    if (mint === SOL.address) return this.solBalance(principal, networkName);
    const network = checkNetwork(networkName);
    const wallet = await this.wallets.walletOf(principal);
    const chain = this.chains.chainFor(principal.environment, network);
    const [info, { holdings }] = await Promise.all([
      this.tokens.info(principal.environment, network, mint, 'mint'),
      this.holdings(principal, chain, network, wallet.address),
    ]);
    const amountRaw = holdings.filter((h) => h.mint === mint).reduce((sum, h) => sum + h.amountRaw, 0n);
    const prices =
      amountRaw > 0n ? await this.tokens.usdPrices(principal.environment, network, [mint]) : new Map<string, number>();
    return {
      mint,
      symbol: info.symbol,
      name: info.name,
      decimals: info.decimals,
      amount: decimalFromRaw(amountRaw, info.decimals),
      amountRaw,
      usdValue: amountRaw === 0n ? 0 : usd(amountRaw, info.decimals, prices.get(mint)),
      address: wallet.address,
      network,
    };
  }
}
