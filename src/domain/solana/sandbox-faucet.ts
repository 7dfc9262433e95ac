import { PublicKey } from '@solana/web3.js';
import type { Principal } from '../auth/principal.js';
import { badInput, DomainError } from '../errors.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import type { CustodialWallets } from './custodial-wallets.js';
import { checkNetwork } from './networks.js';
import type { SandboxChainStore } from './sandbox-chain-store.js';
import {
  airdrop,
  execute,
  faucetKeypair,
  fundTokenInstructions,
  SANDBOX_TOKENS,
  SOL,
  tokenByMint,
  tokenBySymbol,
} from './sandbox-world.js';
import { rawFromDecimal } from './token-amounts.js';
import { withReference } from './transfer-view.js';

/** What the faucet gives when no asset is named. */
const KIT: Array<[string, string]> = [
  ['SOL', '2'],
  ['USDC', '1000'],
  ['USDT', '1000'],
  ['BONK', '10000000'],
];
/** At most this much of one asset per request, in whole tokens. */
const LIMITS: Record<string, number> = { SOL: 100, USDC: 1_000_000, USDT: 1_000_000, BONK: 10_000_000_000 };

export interface FaucetInput {
  network?: string | null;
  /** A symbol (SOL, USDC, USDT, BONK) or a sandbox mint; absent: the whole kit. */
  asset?: string | null;
  amount?: string | null;
}

export interface FaucetGrant {
  address: string;
  /** The network funded: each is its own chain, and mainnet-beta is the default. */
  network: string;
  funded: Array<{ symbol: string; amount: string }>;
}

/**
 * Sandbox only: funds the caller's custodial wallet with SOL and sandbox tokens, on one network.
 * Each request is a new grant (a repeat is not the chain's "already processed"); under an
 * Idempotency-Key a repeat replays the first grant instead.
 */
export class SandboxFaucet {
  constructor(
    private readonly store: SandboxChainStore,
    private readonly wallets: CustodialWallets,
    private readonly idempotency: Idempotency,
  ) {}

  async fund(principal: Principal, input: FaucetInput, idempotencyKey?: string): Promise<FaucetGrant> {
    if (principal.environment !== 'sandbox') throw new DomainError('NOT_FOUND', 'The faucet exists in sandbox only.');
    const network = checkNetwork(input.network);
    const wanted: Array<[string, string]> = input.asset ? [[this.symbolOf(input.asset), input.amount ?? '']] : KIT;
    const grants = wanted.map(([symbol, amount]) => {
      const token = tokenBySymbol(symbol)!;
      if (!amount) throw badInput('amount', 'amount is required with asset.');
      const raw = rawFromDecimal(amount, token.decimals);
      if (raw > BigInt(LIMITS[symbol]!) * 10n ** BigInt(token.decimals))
        throw badInput('amount', `The faucet gives at most ${LIMITS[symbol]} ${symbol} at a time.`);
      return { token, raw, amount };
    });
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'solana.faucet' };
    const request = { network, grants: grants.map((g) => ({ symbol: g.token.symbol, raw: g.raw })) };
    // A replay of a grant stored before grants named their network still names it.
    const replayed = await this.idempotency.run(scope, idempotencyKey, request, async (claim) => {
      const wallet = await this.wallets.walletOf(principal);
      const owner = new PublicKey(wallet.address);
      const grant: FaucetGrant = {
        address: wallet.address,
        network,
        funded: grants.map((g) => ({ symbol: g.token.symbol, amount: g.amount })),
      };
      await this.store.change(network, (chain) => {
        for (const { token, raw } of grants) {
          // Unique each time: the same grant twice would otherwise be the same transaction, which
          // the chain refuses as already processed.
          if (token === SOL) airdrop(chain, owner, raw, true);
          else {
            const [create, mint] = fundTokenInstructions(owner, token, raw);
            execute(chain, [create!, withReference(mint!)], [faucetKeypair()]);
          }
        }
        return (tx) => this.idempotency.finish(tx, claim, grant);
      });
      return grant;
    });
    return { ...replayed, network };
  }

  private symbolOf(asset: string): string {
    const token = tokenBySymbol(asset) ?? tokenByMint(asset);
    if (!token)
      throw badInput(
        'asset',
        `asset must be one of ${SANDBOX_TOKENS.map((t) => t.symbol).join(', ')} or a sandbox mint.`,
      );
    return token.symbol;
  }
}
