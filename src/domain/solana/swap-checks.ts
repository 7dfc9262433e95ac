import { address } from '@solana/kit';
import type { VersionedTransaction } from '@solana/web3.js';
import type { LiteSVM } from 'litesvm';
import { priceMovedBeyond } from '../chain/quote-store.js';
import { DomainError } from '../errors.js';
import type { RpcChain } from './rpc-chain.js';
import type { QuoteRequest } from './exchange-provider.js';
import { parseTokenAccount } from './token-accounts.js';
import { SOL_MINT } from './native-token.js';
import type { SwapQuoteView } from './swap-quote.js';
import { SIGNATURE_FEE } from './transfer-service.js';
import { associatedTokenAddress } from './token-accounts.js';

/** Refusal of a swap whose price moved beyond its quote's slippage: nothing moved. */
export const priceMoved = (view: SwapQuoteView) => priceMovedBeyond(view.slippageTolerance);

/** The checks a swap passes before anything is signed. */
export function checkSandboxBalance(
  svm: LiteSVM,
  owner: string,
  inputMint: string,
  inRaw: bigint,
  view: SwapQuoteView,
): void {
  const lamports = svm.getBalance(address(owner)) ?? 0n;
  let held = lamports;
  if (inputMint !== SOL_MINT) {
    const ata = associatedTokenAddress(inputMint, owner);
    const account = svm.getAccount(address(ata.toBase58()));
    held = account.exists ? parseTokenAccount(account.data).amount : 0n;
  }
  if (held < inRaw)
    throw new DomainError(
      'INSUFFICIENT_FUNDS',
      `Insufficient ${view.fromToken.symbol} balance for this swap: it needs ${view.amounts.inputAmount}.`,
      { field: 'amount' },
    );
  if (lamports < SIGNATURE_FEE * 3n + (inputMint === SOL_MINT ? inRaw : 0n))
    throw new DomainError('INSUFFICIENT_FUNDS', 'Insufficient SOL for the network fee.', { field: 'amount' });
}

/**
 * A provider-built transaction is simulated before it is signed: the wallet must be its fee payer,
 * it must succeed, and the wallet's balances must change by no more than the quote allows.
 */
export async function checkBuiltSwap(
  chain: RpcChain,
  transaction: VersionedTransaction,
  owner: string,
  request: QuoteRequest,
  inRaw: bigint,
  threshold: bigint,
): Promise<void> {
  const keys = transaction.message.staticAccountKeys.map((k) => k.toBase58());
  if (keys[0] !== owner)
    throw new DomainError(
      'SERVICE_UNAVAILABLE',
      'The routing provider built a transaction with another fee payer; it was not signed.',
    );
  const tokenAccount = (mint: string) => associatedTokenAddress(mint, owner).toBase58();
  const watched = [
    owner,
    ...(request.inputAsset === SOL_MINT ? [] : [tokenAccount(request.inputAsset)]),
    ...(request.outputAsset === SOL_MINT ? [] : [tokenAccount(request.outputAsset)]),
  ];
  const mints = [request.inputAsset, request.outputAsset].filter((m) => m !== SOL_MINT);
  const before = await Promise.all([
    chain.lamports(owner),
    ...mints.map((mint) => chain.associatedTokenAmount(owner, mint)),
  ]);
  const simulation = await chain.simulate(transaction.serialize(), watched);
  if (simulation.error)
    throw new DomainError('PRICE_MOVED', `The swap failed in simulation, so it was not signed: ${simulation.error}`);
  const after = simulation.accounts.map((account, i) =>
    account === null ? 0n : i === 0 ? account.lamports : parseTokenAccount(account.data).amount,
  );
  const change = (mint: string) => {
    const i = mint === SOL_MINT ? 0 : watched.indexOf(tokenAccount(mint));
    return after[i]! - before[i]!;
  };
  const spent = -change(request.inputAsset);
  const received = change(request.outputAsset);
  const maxSpend =
    (request.swapMode === 'ExactIn' ? inRaw : threshold) + (request.inputAsset === SOL_MINT ? 10_000_000n : 0n);
  const minReceive =
    (request.swapMode === 'ExactIn' ? threshold : request.amountRaw) -
    (request.outputAsset === SOL_MINT ? 10_000_000n : 0n);
  if (spent > maxSpend || received < minReceive) {
    throw new DomainError(
      'PRICE_MOVED',
      `The routing provider's transaction would spend ${spent} and return ${received} (raw units), outside the quote; it was not signed.`,
    );
  }
}
