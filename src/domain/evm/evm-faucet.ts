import type { Principal } from '../auth/principal.js';
import { badInput, DomainError } from '../errors.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { formatUnits } from '../money/decimal.js';
import { evmRawFromDecimal } from './evm-amounts.js';
import type { EvmChains } from './evm-chains.js';
import type { EvmWallets } from './evm-wallets.js';
import { checkEvmNetwork, EVM_NETWORK_SPECS, type EvmNetwork } from './networks.js';

/** What the faucet gives when no asset is named, in whole units: the native coin and each stablecoin. */
const KIT: Readonly<Record<string, string>> = { native: '1', USDC: '1000', USDT: '1000', CNGN: '1000000' };
/** At most this much of one asset per request, in whole units. */
const LIMITS: Readonly<Record<string, bigint>> = {
  native: 100n,
  USDC: 1_000_000n,
  USDT: 1_000_000n,
  CNGN: 1_000_000_000n,
  WETH: 100n,
  WPOL: 100n,
  WBNB: 100n,
};

export interface EvmFaucetInput {
  /** The native coin's symbol or a supported token's (any case); absent: the kit. */
  asset?: string | null;
  /** With asset: token units, a decimal string. */
  amount?: string | null;
}

export interface EvmFaucetGrant {
  address: string;
  network: EvmNetwork;
  funded: Array<{ symbol: string; amount: string; hash: string }>;
}

interface Wanted {
  symbol: string;
  /** Undefined for the native coin. */
  token?: string;
  raw: bigint;
  decimals: number;
}

/**
 * Sandbox only: funds the caller's EVM wallet on one network with real transactions from the
 * sandbox chain's faucet key (a value transfer, or the token contract's `mint`), each mined before
 * the answer. Each request is a new grant; under an Idempotency-Key a repeat replays the first.
 */
export class EvmSandboxFaucet {
  constructor(
    private readonly chains: EvmChains,
    private readonly wallets: EvmWallets,
    private readonly idempotency: Idempotency,
  ) {}

  async fund(
    principal: Principal,
    networkArg: unknown,
    input: EvmFaucetInput,
    idempotencyKey?: string,
  ): Promise<EvmFaucetGrant> {
    if (principal.environment !== 'sandbox') throw new DomainError('NOT_FOUND', 'The faucet exists in sandbox only.');
    const network = checkEvmNetwork(networkArg as string);
    const wanted = input.asset ? [this.one(network, input.asset, input.amount)] : this.kit(network);
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'evm.faucet' };
    const request = { network, grants: wanted.map((w) => ({ symbol: w.symbol, raw: w.raw })) };
    return this.idempotency.run(scope, idempotencyKey, request, async () => {
      const { address } = await this.wallets.walletOf(principal);
      const chain = this.chains.sandboxFor(network);
      const funded: EvmFaucetGrant['funded'] = [];
      // One after another: each is a transaction from the one faucet key, so their nonces follow.
      for (const w of wanted) {
        const hash = await chain.faucet(address, w.token ? { token: w.token } : { native: true }, w.raw);
        funded.push({ symbol: w.symbol, amount: formatUnits(w.raw, w.decimals), hash });
      }
      return { address, network, funded };
    });
  }

  private kit(network: EvmNetwork): Wanted[] {
    const spec = EVM_NETWORK_SPECS[network];
    const native = { symbol: spec.native.symbol, raw: 10n ** 18n, decimals: spec.native.decimals };
    const tokens = spec.tokens
      .filter((token) => KIT[token.symbol] !== undefined)
      .map((token) => ({
        symbol: token.symbol,
        token: token.symbol,
        raw: BigInt(KIT[token.symbol]!) * 10n ** BigInt(token.decimals),
        decimals: token.decimals,
      }));
    return [native, ...tokens];
  }

  private one(network: EvmNetwork, asset: string, amount: string | null | undefined): Wanted {
    const spec = EVM_NETWORK_SPECS[network];
    const symbol = asset.toUpperCase();
    const token = spec.tokens.find((t) => t.symbol === symbol);
    if (symbol !== spec.native.symbol && !token)
      throw badInput(
        'asset',
        `asset must be one of ${[spec.native.symbol, ...spec.tokens.map((t) => t.symbol)].join(', ')} on ${network}.`,
      );
    if (amount === undefined || amount === null || amount === '')
      throw badInput('amount', 'amount is required with asset.');
    const decimals = token?.decimals ?? spec.native.decimals;
    const raw = evmRawFromDecimal(amount, decimals);
    const limit = LIMITS[token?.symbol ?? 'native']!;
    if (raw > limit * 10n ** BigInt(decimals))
      throw badInput('amount', `The faucet gives at most ${limit} ${symbol} at a time.`);
    return { symbol, token: token?.symbol, raw, decimals };
  }
}
