import { randomUUID } from 'node:crypto';
import { VersionedTransaction } from '@solana/web3.js';
import { and, eq, isNull } from 'drizzle-orm';
import type { Database, Executor } from '../../db/client.js';
import { solanaQuotes } from '../../db/solana-schema.js';
import type { Principal } from '../auth/principal.js';
import { type Clock, type ClockFor, clockLookup } from '../clock.js';
import { checkSlippage } from '../chain/exchange.js';
import { quoteExpired, quoteUsed } from '../chain/quote-store.js';
import { badInput, DomainError, InputProblems } from '../errors.js';
import { checkFields, checkFieldsAwaiting } from '../field-checks.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { isUuid } from '../ids.js';
import type { CustodialWallets } from './custodial-wallets.js';
import type { ExchangeProvider, QuoteRequest, SwapMode } from './exchange-provider.js';
import { checkNetwork } from './networks.js';
import { SOL_MINT } from './native-token.js';
import type { SolanaChains } from './solana-chains.js';
import { QUOTE_TTL_SECONDS, quoteView, type StoredQuote, type SwapQuoteView } from './swap-quote.js';
import { checkAddress, decimalFromRaw, rawFromDecimal } from './token-amounts.js';
import type { TokenDirectory } from './token-directory.js';
import { recordTransferEvent } from './transfer-events.js';
import { checkBuiltSwap } from './swap-checks.js';
import { type SolanaTransfers, TOKEN_ACCOUNT_SIZE, transferView } from './transfer-service.js';
import { feeCapOf } from './fee-cap.js';
import { insertTransfer, transferStore } from './transfer-store.js';

export interface QuoteInput {
  inputMint: string;
  outputMint: string;
  amount: unknown;
  swapMode?: string | null;
  slippageBps?: number | null;
  network?: string | null;
}

/** A swap names a stored quote, or carries the quote's own fields. */
export interface SwapRequest {
  quoteId?: string | null;
  inputMint?: string | null;
  outputMint?: string | null;
  amount?: unknown;
  swapMode?: string | null;
  slippageBps?: number | null;
  network?: string | null;
}

export interface SwapResult {
  signature: string;
  txUrl: string;
  status: 'pending' | 'confirmed' | 'failed';
  quoteId: string;
  inputAmount: string;
  outputAmount: string;
}

/**
 * Quotes and swaps for custodial wallets. A quote is stored for 30 seconds; a swap re-quotes and
 * refuses with PRICE_MOVED when the new price is beyond the quote's slippage, so nothing moves at a
 * price the caller did not accept. Sandbox swaps run on the sandbox AMM as one atomic transaction;
 * production swaps sign Jupiter's transaction after simulating it and checking its balance changes.
 */
export class SolanaExchange {
  constructor(
    private readonly db: Database,
    clock: Clock | ClockFor,
    private readonly idempotency: Idempotency,
    private readonly wallets: CustodialWallets,
    private readonly chains: SolanaChains,
    private readonly tokens: TokenDirectory,
    private readonly providers: (environment: Principal['environment']) => ExchangeProvider,
    private readonly transfers: SolanaTransfers,
  ) {
    this.clockFor = clockLookup(clock);
  }

  /** Each account's time (a sandbox test clock's, when attached): a quote lives for its TTL on it. */
  private readonly clockFor: ClockFor;

  async quote(principal: Principal, input: QuoteInput): Promise<SwapQuoteView> {
    const { network, inputMint, outputMint, swapMode, slippageBps } = checkFields({
      network: () => checkNetwork(input.network),
      inputMint: () => checkAddress(input.inputMint, 'inputMint').toBase58(),
      outputMint: () => checkAddress(input.outputMint, 'outputMint').toBase58(),
      swapMode: () => checkSwapMode(input.swapMode),
      slippageBps: () => checkSlippage(input.slippageBps),
    });
    if (inputMint === outputMint) throw badInput('outputMint', 'outputMint must differ from inputMint.');
    const { from, to } = await checkFieldsAwaiting({
      from: () => this.tokens.info(principal.environment, network, inputMint, 'inputMint'),
      to: () => this.tokens.info(principal.environment, network, outputMint, 'outputMint'),
    });
    const amountRaw = rawFromDecimal(input.amount, swapMode === 'ExactIn' ? from.decimals : to.decimals);
    const request: QuoteRequest = { inputAsset: inputMint, outputAsset: outputMint, amountRaw, swapMode, slippageBps };
    const provider = this.providers(principal.environment);
    const wallet = await this.wallets.walletOf(principal);
    const chain = this.chains.chainFor(principal.environment, network);
    const [quote, prices, balance] = await Promise.all([
      provider.quote(network, request),
      this.tokens.usdPrices(principal.environment, network, [inputMint, outputMint, SOL_MINT]),
      inputMint === SOL_MINT ? chain.lamports(wallet.address) : chain.associatedTokenAmount(wallet.address, inputMint),
    ]);
    const now = this.clockFor(principal).now();
    const quoteId = randomUUID();
    const symbols = (mint: string) =>
      this.tokens.known(principal.environment).find((t) => t.address === mint)?.symbol ?? mint;
    const view = quoteView({
      quoteId,
      network,
      request,
      from,
      to,
      quote,
      prices,
      provider,
      symbols,
      inputBalanceRaw: balance,
      now,
    });
    const stored: StoredQuote = {
      view,
      request: { inputMint, outputMint, amountRaw: amountRaw.toString(), swapMode, slippageBps },
      otherAmountThresholdRaw: quote.otherAmountThresholdRaw.toString(),
    };
    await this.db.insert(solanaQuotes).values({
      id: quoteId,
      userId: principal.userId,
      environment: principal.environment,
      network,
      quote: stored,
      expiresAt: new Date(now.getTime() + QUOTE_TTL_SECONDS * 1000),
    });
    return view;
  }

  /**
   * Executes a stored quote (`quoteId`) or a fresh one built from the same fields as a quote. The
   * environment's provider executes it: a venue on its own chain (the sandbox AMM) runs and records
   * it in one commit; otherwise its transaction is checked against a simulation, signed, stored and
   * sent like any chain send.
   */
  async swap(principal: Principal, input: SwapRequest, idempotencyKey: string | undefined): Promise<SwapResult> {
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'solana.swap' };
    return this.idempotency.run(scope, idempotencyKey, input, async (claim) => {
      if (claim?.resourceId) return this.resultOf((await transferStore.findTransfer(this.db, claim.resourceId))!);
      const quoteId = input.quoteId ?? (await this.quote(principal, fieldsOf(input))).quoteId;
      const stored = await this.storedQuote(principal, quoteId);
      const network = stored.view.network;
      const { inputMint, outputMint, amountRaw, swapMode, slippageBps } = stored.request;
      const request: QuoteRequest = {
        inputAsset: inputMint,
        outputAsset: outputMint,
        amountRaw: BigInt(amountRaw),
        swapMode,
        slippageBps,
      };
      const threshold = BigInt(stored.otherAmountThresholdRaw);
      const wallet = await this.wallets.walletOf(principal);
      const execution = await this.providers(principal.environment).execute({
        network,
        request,
        threshold,
        view: stored.view,
        walletAddress: wallet.address,
        sign: (message) => this.wallets.sign(wallet, message),
        takeQuote: () => this.takeQuote(this.db, principal, quoteId),
        record: async (tx, executed) => {
          // Taken in the transaction that records the swap: a refusal here undoes the swap on the chain.
          await this.takeQuote(tx, principal, quoteId);
          const now = this.clockFor(principal).now();
          const inserted = await insertTransfer(tx, {
            userId: principal.userId,
            environment: principal.environment,
            network,
            kind: 'swap',
            fromAddress: wallet.address,
            toAddress: wallet.address,
            asset: request.inputAsset === SOL_MINT ? null : request.inputAsset,
            amountRaw: executed.inRaw,
            decimals: stored.view.fromToken.decimals,
            outputAsset: request.outputAsset,
            outputAmountRaw: executed.outRaw,
            quoteId,
            txHash: executed.hash,
            wire: executed.wire,
            // Executed in the commit that records it: never sent, so no height bounds it.
            validThroughHeight: null,
            status: 'confirmed',
            createdAt: now,
            updatedAt: now,
          });
          await recordTransferEvent(tx, inserted, now);
          await this.idempotency.attach(tx, claim, inserted.id);
          return inserted;
        },
      });
      if ('recorded' in execution) return this.resultOf(execution.recorded);
      const { send } = execution;
      const chain = this.chains.productionChain(network);
      const transaction = VersionedTransaction.deserialize(send.unsigned);
      const [, tokenAccountRent] = await Promise.all([
        checkBuiltSwap(chain, transaction, wallet.address, request, send.inAmountRaw, threshold),
        chain.rentExempt(TOKEN_ACCOUNT_SIZE),
      ]);
      // The swap's key is claimed by `swap` (Idempotency.run); the record is attached to that claim.
      const view = await this.transfers.submit(
        principal,
        wallet,
        chain,
        null,
        {
          kind: 'swap',
          network,
          to: wallet.address,
          mint: request.inputAsset === SOL_MINT ? null : request.inputAsset,
          amountRaw: send.inAmountRaw,
          decimals: stored.view.fromToken.decimals,
          outputMint: request.outputAsset,
          outputAmountRaw: send.outAmountRaw,
          quoteId,
          // Held in SOL while pending: everything the provider's transaction can cost the wallet.
          lamportsNeeded: feeCapOf(transaction.message, wallet.address, tokenAccountRent),
          transaction,
          lastValidBlockHeight: send.validThroughHeight,
        },
        (tx, row) => this.idempotency.attach(tx, claim, row.id),
      );
      return {
        signature: view.signature,
        txUrl: view.txUrl,
        status: view.status,
        quoteId,
        inputAmount: decimalFromRaw(send.inAmountRaw, stored.view.fromToken.decimals),
        outputAmount: decimalFromRaw(send.outAmountRaw, stored.view.toToken.decimals),
      };
    });
  }

  /**
   * Marks a quote executed, once: a conditional update, so of two swaps racing on one quote exactly
   * one takes it (the unique index on chain_sends.quote_id backs this up).
   */
  private async takeQuote(db: Executor, principal: Principal, quoteId: string): Promise<void> {
    const [taken] = await db
      .update(solanaQuotes)
      .set({ executedAt: this.clockFor(principal).now() })
      .where(and(eq(solanaQuotes.id, quoteId), isNull(solanaQuotes.executedAt)))
      .returning({ id: solanaQuotes.id });
    if (!taken) throw quoteUsed(quoteId);
  }

  private async storedQuote(principal: Principal, quoteId: string): Promise<StoredQuote> {
    const [row] = isUuid(quoteId)
      ? await this.db
          .select()
          .from(solanaQuotes)
          .where(
            and(
              eq(solanaQuotes.id, quoteId),
              eq(solanaQuotes.userId, principal.userId),
              eq(solanaQuotes.environment, principal.environment),
            ),
          )
      : [];
    if (!row) throw new DomainError('NOT_FOUND', `Quote ${JSON.stringify(quoteId)} was not found.`);
    if (row.executedAt) throw quoteUsed(quoteId);
    if (row.expiresAt.getTime() <= this.clockFor(principal).now().getTime()) {
      throw quoteExpired(quoteId, row.expiresAt);
    }
    return row.quote as StoredQuote;
  }

  /** The answer for a recorded swap, amounts in token units (the quote knows the output's decimals). */
  private async resultOf(
    row: NonNullable<Awaited<ReturnType<typeof transferStore.findTransfer>>>,
  ): Promise<SwapResult> {
    const view = transferView(row);
    const [quote] = row.quoteId
      ? await this.db.select({ quote: solanaQuotes.quote }).from(solanaQuotes).where(eq(solanaQuotes.id, row.quoteId))
      : [];
    const outputDecimals = (quote?.quote as StoredQuote | undefined)?.view.toToken.decimals ?? 0;
    return {
      signature: view.signature,
      txUrl: view.txUrl,
      status: view.status,
      quoteId: row.quoteId ?? '',
      inputAmount: view.amount,
      outputAmount: row.outputAmountRaw === null ? '' : decimalFromRaw(row.outputAmountRaw, outputDecimals),
    };
  }
}

function fieldsOf(input: SwapRequest): QuoteInput {
  const problems = new InputProblems();
  for (const field of ['inputMint', 'outputMint', 'amount'] as const) {
    if (input[field] === undefined || input[field] === null || input[field] === '')
      problems.add(field, `${field} is required when no quoteId is given.`);
  }
  problems.throwIfAny();
  return { ...input, inputMint: input.inputMint!, outputMint: input.outputMint!, amount: input.amount };
}

function checkSwapMode(value: string | null | undefined): SwapMode {
  if (value === undefined || value === null || value === '') return 'ExactIn';
  if (value !== 'ExactIn' && value !== 'ExactOut') throw badInput('swapMode', 'swapMode must be ExactIn or ExactOut.');
  return value;
}
