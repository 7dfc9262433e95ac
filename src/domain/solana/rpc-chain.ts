import { NATIVE_MINT, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import type { Arrival } from './chain.js';
import { Connection, PublicKey, SendTransactionError, VersionedTransaction } from '@solana/web3.js';
import { TransactionRejected } from '../chain/chain-adapter.js';
import type { SignatureState, SolanaChain, TokenHolding } from './chain.js';
import type { ListWindow, ProviderRecord } from '../reconciliation/records.js';
import type { SolanaNetwork } from './networks.js';
import { checkedRpcFetch, classifiedConnection } from '../upstream/solana-rpc.js';
import { RPC_RESULTS } from './rpc-answers.js';
import { associatedTokenAddress } from './token-accounts.js';

const RPC_TIMEOUT_MS = 10_000;

/** A simulation's outcome (production swap checks), with the post-state of the accounts asked for. */
export interface SimulationResult {
  error: string | undefined;
  /** Post-state of the accounts asked for (null when absent after the transaction). */
  accounts: Array<{ lamports: bigint; owner: string; data: Uint8Array } | null>;
}

/**
 * A production network over Solana JSON-RPC (web3.js v1 `Connection`), at commitment `confirmed`.
 * Sends skip nothing (preflight on) and ask the node not to retry: re-broadcasting is ours to do,
 * while the blockhash lives (see the confirmation job).
 */
export class RpcChain implements SolanaChain {
  private readonly connection: Connection;

  constructor(
    readonly network: SolanaNetwork,
    url: string,
  ) {
    // A node that never answers must not hold a request forever: every call has a deadline. Every
    // answer is checked against its documented shape (rpc-answers.ts) before web3.js reads it, and
    // every call's failure is classified (upstream/) the way every other provider's is.
    this.connection = classifiedConnection(
      new Connection(url, {
        commitment: 'confirmed',
        disableRetryOnRateLimit: true,
        fetch: checkedRpcFetch(RPC_RESULTS, RPC_TIMEOUT_MS),
      }),
    );
  }

  async latestBlockhash() {
    const { blockhash, lastValidBlockHeight } = await this.connection.getLatestBlockhash('confirmed');
    return { blockhash, lastValidBlockHeight: BigInt(lastValidBlockHeight) };
  }

  async blockHeight() {
    return BigInt(await this.connection.getBlockHeight('confirmed'));
  }

  async lamports(owner: string) {
    return BigInt(await this.connection.getBalance(new PublicKey(owner)));
  }

  async tokenHoldings(owner: string): Promise<TokenHolding[]> {
    const { value } = await this.connection.getParsedTokenAccountsByOwner(new PublicKey(owner), {
      programId: TOKEN_PROGRAM_ID,
    });
    return value.map(({ pubkey, account }) => {
      const info = (
        account.data as { parsed: { info: { mint: string; tokenAmount: { amount: string; decimals: number } } } }
      ).parsed.info;
      return {
        mint: info.mint,
        account: pubkey.toBase58(),
        amountRaw: BigInt(info.tokenAmount.amount),
        decimals: info.tokenAmount.decimals,
      };
    });
  }

  async associatedTokenAmount(owner: string, mint: string) {
    const account = await this.connection.getAccountInfo(associatedTokenAddress(mint, owner));
    return account && account.data.length === 165 ? Buffer.from(account.data).readBigUInt64LE(64) : 0n;
  }

  async mintDecimals(mint: string) {
    const account = await this.connection.getAccountInfo(new PublicKey(mint));
    if (!account?.owner.equals(TOKEN_PROGRAM_ID) || account.data.length !== 82) return undefined;
    return account.data[44];
  }

  async accountExists(address: string) {
    return (await this.connection.getAccountInfo(new PublicKey(address))) !== null;
  }

  async rentExempt(size: number) {
    return BigInt(await this.connection.getMinimumBalanceForRentExemption(size));
  }

  async sendTransaction(wire: Uint8Array): Promise<string> {
    try {
      return await this.connection.sendRawTransaction(wire, {
        skipPreflight: false,
        preflightCommitment: 'confirmed',
        maxRetries: 0,
      });
    } catch (error) {
      if (error instanceof SendTransactionError) throw new TransactionRejected(error.message);
      throw error;
    }
  }

  async signatureState(signature: string): Promise<SignatureState> {
    const { value } = await this.connection.getSignatureStatuses([signature], { searchTransactionHistory: true });
    const status = value[0];
    if (!status) return { state: 'unknown' };
    if (status.err) return { state: 'failed', error: JSON.stringify(status.err) };
    return status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized'
      ? { state: 'confirmed' }
      : { state: 'unknown' };
  }

  /**
   * What arrived at `address` since `until`, oldest first: SOL at the wallet itself, or tokens at
   * one of its token accounts (a token transfer names the token account, not the wallet). Only
   * transactions the wallet did not sign count: its own transfers and swaps are not arrivals.
   */
  async arrivalsAt(
    address: string,
    wallet: string,
    until: string | undefined,
  ): Promise<{ arrivals: Arrival[]; newest: string | undefined }> {
    const signatures = await this.connection.getSignaturesForAddress(
      new PublicKey(address),
      { until, limit: 100 },
      'confirmed',
    );
    const arrivals: Arrival[] = [];
    for (const entry of [...signatures].reverse()) {
      if (entry.err) continue;
      const parsed = await this.connection.getParsedTransaction(entry.signature, {
        commitment: 'confirmed',
        maxSupportedTransactionVersion: 0,
      });
      if (!parsed?.meta) continue;
      const keys = parsed.transaction.message.accountKeys.map((k) => ({ key: k.pubkey.toBase58(), signer: k.signer }));
      if (keys.some((k) => k.signer && k.key === wallet)) continue;
      const from = keys[0]!.key;
      const index = keys.findIndex((k) => k.key === address);
      if (address === wallet) {
        const gain = BigInt(parsed.meta.postBalances[index] ?? 0) - BigInt(parsed.meta.preBalances[index] ?? 0);
        if (index >= 0 && gain > 0n)
          arrivals.push({
            owner: wallet,
            mint: NATIVE_MINT.toBase58(),
            amountRaw: gain,
            decimals: 9,
            signature: entry.signature,
            from,
          });
        continue;
      }
      const post = parsed.meta.postTokenBalances?.find((b) => b.accountIndex === index && b.owner === wallet);
      if (!post) continue;
      const pre = parsed.meta.preTokenBalances?.find((b) => b.accountIndex === index);
      const gain = BigInt(post.uiTokenAmount.amount) - BigInt(pre?.uiTokenAmount.amount ?? '0');
      if (gain > 0n)
        arrivals.push({
          owner: wallet,
          mint: post.mint,
          amountRaw: gain,
          decimals: post.uiTokenAmount.decimals,
          signature: entry.signature,
          from,
        });
    }
    return { arrivals, newest: signatures[0]?.signature ?? until };
  }

  /**
   * Reconciliation: pages `getSignaturesForAddress` back from the newest until the window's start,
   * and keeps the transactions in the window that `address` signed (arrivals it did not sign are
   * not its transfers). A failed transaction still cost its fee: it is listed as failed.
   */
  async signedBy(address: string, window: ListWindow): Promise<ProviderRecord[]> {
    const records: ProviderRecord[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await this.connection.getSignaturesForAddress(
        new PublicKey(address),
        { ...(before ? { before } : {}), limit: 1000 },
        'confirmed',
      );
      for (const entry of page) {
        const at = new Date((entry.blockTime ?? 0) * 1000);
        if (at < window.from || at >= window.to) continue;
        const parsed = await this.connection.getParsedTransaction(entry.signature, {
          commitment: 'confirmed',
          maxSupportedTransactionVersion: 0,
        });
        const signed = parsed?.transaction.message.accountKeys.some((k) => k.signer && k.pubkey.toBase58() === address);
        if (!signed) continue;
        records.push({
          reference: entry.signature,
          providerRef: entry.signature,
          amount: null,
          currency: 'SOL',
          status: entry.err ? 'failed' : 'succeeded',
          at,
        });
      }
      const oldest = page.at(-1);
      if (!oldest || page.length < 1000 || (oldest.blockTime ?? 0) * 1000 < window.from.getTime()) break;
      before = oldest.signature;
    }
    return records;
  }

  async simulate(wire: Uint8Array, accounts: string[]): Promise<SimulationResult> {
    const { value } = await this.connection.simulateTransaction(VersionedTransaction.deserialize(wire), {
      sigVerify: false,
      commitment: 'confirmed',
      accounts: { encoding: 'base64', addresses: accounts },
    });
    return {
      error: value.err ? JSON.stringify(value.err) : undefined,
      accounts: (value.accounts ?? []).map((a) =>
        a ? { lamports: BigInt(a.lamports), owner: a.owner, data: Buffer.from(a.data[0]!, 'base64') } : null,
      ),
    };
  }
}
