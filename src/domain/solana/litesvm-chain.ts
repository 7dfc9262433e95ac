import { address } from '@solana/kit';
import { TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { VersionedTransaction } from '@solana/web3.js';
import type { LiteSVM } from 'litesvm';
import type { Arrival, ExecutionListener, SignatureState, SolanaChain, TokenHolding } from './chain.js';
import { TransactionRejected } from '../chain/chain-adapter.js';
import type { SolanaNetwork } from './networks.js';
import { accountAt, accountExists, lamportsAt } from './sandbox-accounts.js';
import type { SandboxChainStore } from './sandbox-chain-store.js';
import { ChainFailure, SOL_MINT } from './sandbox-world.js';
import { associatedTokenAddress, parseTokenAccount } from './token-accounts.js';

export { parseTokenAccount } from './token-accounts.js';

/** What arrived at a wallet that did not sign the transaction: an incoming transfer. */
const TOKEN_PROGRAM = TOKEN_PROGRAM_ID.toBase58();

/** A sandbox network: litesvm behind the chain interface, its state in the database (SandboxChainStore). */
export class LiteSvmChain implements SolanaChain {
  /** Its store posts what each transaction moved of custodial wallets in the chain's commit (sandbox-ledger.ts). */
  readonly postsEveryMovement = true;
  constructor(
    readonly network: SolanaNetwork,
    private readonly store: SandboxChainStore,
    private readonly onExecuted: ExecutionListener,
  ) {}

  /** The sandbox's blockhashes come from the clock, good for 150 slots (sandbox-blockhash.ts). */
  async latestBlockhash() {
    return this.store.blockhashes.latest(this.network);
  }

  async blockHeight() {
    return this.store.blockhashes.slot();
  }

  lamports(owner: string) {
    return this.store.read(this.network, (svm) => lamportsAt(svm, owner));
  }

  tokenHoldings(owner: string): Promise<TokenHolding[]> {
    return this.store.read(this.network, (svm) => holdingsOf(svm, owner));
  }

  associatedTokenAmount(owner: string, mint: string) {
    const ata = associatedTokenAddress(mint, owner).toBase58();
    return this.store.read(this.network, (svm) => {
      const account = accountAt(svm, ata);
      return account && account.data.length === 165 ? parseTokenAccount(account.data).amount : 0n;
    });
  }

  mintDecimals(mint: string) {
    return this.store.read(this.network, (svm) => mintDecimalsOf(svm, mint));
  }

  accountExists(account: string) {
    return this.store.read(this.network, (svm) => accountExists(svm, account));
  }

  rentExempt(size: number) {
    return this.store.readFixed(this.network, (svm) => svm.minimumBalanceForRentExemption(BigInt(size)));
  }

  /**
   * Runs the transaction at once (the sandbox confirms synchronously); a failure moves nothing and
   * is a rejection. The VM runs before the database transaction that stores what it changed.
   */
  sendTransaction(wire: Uint8Array): Promise<string> {
    return this.store.change(this.network, (chain) => {
      const parsed = VersionedTransaction.deserialize(wire);
      const keys = parsed.message.staticAccountKeys.map((k) => k.toBase58());
      const signers = new Set(keys.slice(0, parsed.message.header.numRequiredSignatures));
      const before = balancesOf(chain.svm, keys);
      let signature: string;
      try {
        signature = chain.run(wire);
      } catch (error) {
        if (error instanceof ChainFailure) throw new TransactionRejected(error.message);
        throw error;
      }
      const after = balancesOf(chain.svm, keys);
      const from = keys[0]!;
      const arrivals: Arrival[] = [];
      for (const [key, post] of after) {
        const gain = post.amount - (before.get(key)?.amount ?? 0n);
        if (gain > 0n && !signers.has(post.owner))
          arrivals.push({
            owner: post.owner,
            mint: post.mint,
            amountRaw: gain,
            decimals: post.decimals,
            signature,
            from,
          });
      }
      return async (tx) => {
        await this.onExecuted(tx, this.network, { signature, arrivals });
        return signature;
      };
    });
  }

  /** Executed transactions are confirmed; a refused one changed nothing and is not known (as a node would not know it). */
  async signatureState(signature: string): Promise<SignatureState> {
    return (await this.store.executed(this.network, signature)) ? { state: 'confirmed' } : { state: 'unknown' };
  }
}

interface Balance {
  owner: string;
  mint: string;
  amount: bigint;
  decimals: number;
}

/** SOL and token balances held by the given accounts, keyed by account. */
function balancesOf(svm: LiteSVM, keys: string[]): Map<string, Balance> {
  const balances = new Map<string, Balance>();
  for (const key of keys) {
    const account = accountAt(svm, key);
    if (!account) continue;
    if (account.owner === TOKEN_PROGRAM && account.data.length === 165) {
      const token = parseTokenAccount(account.data);
      balances.set(key, {
        owner: token.owner,
        mint: token.mint,
        amount: token.amount,
        decimals: mintDecimalsOf(svm, token.mint) ?? 0,
      });
    } else if (account.data.length === 0) {
      balances.set(key, { owner: key, mint: SOL_MINT, amount: BigInt(account.lamports), decimals: 9 });
    }
  }
  return balances;
}

function mintDecimalsOf(svm: LiteSVM, mint: string): number | undefined {
  const account = accountAt(svm, mint);
  if (!account || account.owner !== TOKEN_PROGRAM || account.data.length !== 82) return undefined;
  return account.data[44];
}

function holdingsOf(svm: LiteSVM, owner: string): TokenHolding[] {
  const holdings: TokenHolding[] = [];
  for (const account of svm.getProgramAccounts(address(TOKEN_PROGRAM))) {
    if (account.data.length !== 165) continue;
    const token = parseTokenAccount(account.data);
    if (token.owner !== owner) continue;
    holdings.push({
      mint: token.mint,
      account: account.address,
      amountRaw: token.amount,
      decimals: mintDecimalsOf(svm, token.mint) ?? 0,
    });
  }
  return holdings.sort((a, b) => a.mint.localeCompare(b.mint) || a.account.localeCompare(b.account));
}
