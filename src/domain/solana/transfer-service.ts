import { getBase58Decoder } from '@solana/kit';
import { createAssociatedTokenAccountIdempotentInstruction, createTransferCheckedInstruction } from '@solana/spl-token';
import {
  PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
  VersionedTransaction,
} from '@solana/web3.js';
import { eq } from 'drizzle-orm';
import type { Database, Tx } from '../../db/client.js';
import { solanaWallets } from '../../db/solana-schema.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import type { Claim, Idempotency } from '../idempotency/idempotency.js';
import { enqueueJob } from '../jobs/job-runner.js';
import { type SolanaChain, TransactionRejected } from './chain.js';
import type { CustodialWallets, SolanaWalletRow } from './custodial-wallets.js';
import { checkNetwork, type SolanaNetwork } from './networks.js';
import { SOL, SOL_MINT } from './sandbox-world.js';
import type { SolanaChains } from './solana-chains.js';
import { checkAddress, decimalFromRaw, rawFromDecimal } from './token-amounts.js';
import type { TokenDirectory } from './token-directory.js';
import { recordTransferEvent } from './transfer-events.js';
import { type TransferView, transferView, withReference } from './transfer-view.js';

export { type TransferView, transferView, withReference } from './transfer-view.js';
import { type SolanaTransferRow, transferStore } from './transfer-store.js';
import { associatedTokenAddress } from './token-accounts.js';

export const CONFIRM_JOB = 'solana.confirm';
/** How often the confirmation job asks the chain, and re-broadcasts while the blockhash lives. */
export const CONFIRM_EVERY_MS = 2_000;
/** Lamports per signature (Solana's base fee). */
export const SIGNATURE_FEE = 5_000n;
/** Rent of a new associated token account (165 bytes). */
const TOKEN_ACCOUNT_SIZE = 165;

export interface TransferInput {
  to: string;
  /** Absent for SOL. */
  tokenMintAddress?: string | null;
  amount: unknown;
  network?: string | null;
}

/** A transaction to sign and send for a wallet, with what it takes from the wallet. */
export interface Outgoing {
  kind: 'sol' | 'token' | 'swap';
  network: SolanaNetwork;
  to: string;
  mint: string | null;
  amountRaw: bigint;
  decimals: number;
  outputMint?: string;
  outputAmountRaw?: bigint;
  quoteId?: string;
  /** Lamports the transaction spends beyond `amountRaw` of SOL: fees and rent. */
  lamportsNeeded: bigint;
  /** The unsigned transaction; the wallet is its fee payer and first signer. */
  transaction: Transaction | VersionedTransaction;
  lastValidBlockHeight: bigint;
}

const base58 = getBase58Decoder();

/**
 * Outgoing transfers of custodial wallets. The order of things is the point: check the input, claim
 * the idempotency key, read the chain, then under the wallet's lock check the balance against what
 * pending transactions already hold, sign, and store the signed transaction with its signature and
 * lastValidBlockHeight; only then send. A job re-broadcasts until the chain confirms or the
 * blockhash expires, and only then is the transaction failed and its hold released.
 */
export class SolanaTransfers {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly idempotency: Idempotency,
    private readonly wallets: CustodialWallets,
    private readonly chains: SolanaChains,
    private readonly tokens: TokenDirectory,
    private readonly confirmWaitMs: number,
  ) {}

  async transferToken(
    principal: Principal,
    input: TransferInput,
    idempotencyKey: string | undefined,
  ): Promise<TransferView> {
    const network = checkNetwork(input.network);
    const to = checkAddress(input.to, 'to');
    const mint = checkAddress(input.tokenMintAddress, 'tokenMintAddress');
    if (mint.toBase58() === SOL_MINT)
      return this.transferSol(principal, { ...input, tokenMintAddress: null }, idempotencyKey);
    const token = await this.tokens.info(principal.environment, network, mint.toBase58(), 'tokenMintAddress');
    const amountRaw = rawFromDecimal(input.amount, token.decimals);
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'solana.transfer-token' };
    return this.idempotency.run(
      scope,
      idempotencyKey,
      { network, to: to.toBase58(), mint: mint.toBase58(), amountRaw },
      async (claim) => {
        if (claim?.resourceId) return transferView((await transferStore.findTransfer(this.db, claim.resourceId))!);
        const wallet = await this.wallets.walletOf(principal);
        const chain = this.chains.chainFor(principal.environment, network);
        const owner = new PublicKey(wallet.address);
        const source = associatedTokenAddress(mint, owner);
        const destination = associatedTokenAddress(mint, to);
        const [{ blockhash, lastValidBlockHeight }, destinationExists, rent] = await Promise.all([
          chain.latestBlockhash(),
          chain.accountExists(destination.toBase58()),
          chain.rentExempt(TOKEN_ACCOUNT_SIZE),
        ]);
        const instructions: TransactionInstruction[] = [];
        // The sender pays the recipient's token-account rent when it has none (see docs/solana.md).
        if (!destinationExists)
          instructions.push(createAssociatedTokenAccountIdempotentInstruction(owner, destination, to, mint));
        instructions.push(
          withReference(createTransferCheckedInstruction(source, mint, destination, owner, amountRaw, token.decimals)),
        );
        return this.submit(principal, wallet, chain, claim, {
          kind: 'token',
          network,
          to: to.toBase58(),
          mint: mint.toBase58(),
          amountRaw,
          decimals: token.decimals,
          lamportsNeeded: SIGNATURE_FEE + (destinationExists ? 0n : rent),
          transaction: new Transaction({
            feePayer: owner,
            blockhash,
            lastValidBlockHeight: Number(lastValidBlockHeight),
          }).add(...instructions),
          lastValidBlockHeight,
        });
      },
    );
  }

  async transferSol(
    principal: Principal,
    input: TransferInput,
    idempotencyKey: string | undefined,
  ): Promise<TransferView> {
    const network = checkNetwork(input.network);
    const to = checkAddress(input.to, 'to');
    const amountRaw = rawFromDecimal(input.amount, SOL.decimals);
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'solana.transfer-sol' };
    return this.idempotency.run(scope, idempotencyKey, { network, to: to.toBase58(), amountRaw }, async (claim) => {
      if (claim?.resourceId) return transferView((await transferStore.findTransfer(this.db, claim.resourceId))!);
      const chain = this.chains.chainFor(principal.environment, network);
      const [wallet, { blockhash, lastValidBlockHeight }] = await Promise.all([
        this.wallets.walletOf(principal),
        chain.latestBlockhash(),
      ]);
      const owner = new PublicKey(wallet.address);
      return this.submit(principal, wallet, chain, claim, {
        kind: 'sol',
        network,
        to: to.toBase58(),
        mint: null,
        amountRaw,
        decimals: SOL.decimals,
        lamportsNeeded: SIGNATURE_FEE,
        transaction: new Transaction({
          feePayer: owner,
          blockhash,
          lastValidBlockHeight: Number(lastValidBlockHeight),
        }).add(withReference(SystemProgram.transfer({ fromPubkey: owner, toPubkey: to, lamports: amountRaw }))),
        lastValidBlockHeight,
      });
    });
  }

  /** Checks the balance under the wallet's lock, signs, stores, sends, and waits a bounded time for confirmation. */
  async submit(
    principal: Principal,
    wallet: SolanaWalletRow,
    chain: SolanaChain,
    claim: Claim | null,
    outgoing: Outgoing,
  ): Promise<TransferView> {
    const [lamports, tokenBalance] = await Promise.all([
      chain.lamports(wallet.address),
      outgoing.mint ? chain.associatedTokenAmount(wallet.address, outgoing.mint) : Promise.resolve(0n),
    ]);
    const now = this.clock.now();
    const row = await this.db.transaction(async (tx) => {
      // One wallet's transactions are checked one at a time, so two can never spend the same balance.
      await tx
        .select({ id: solanaWallets.id })
        .from(solanaWallets)
        .where(eq(solanaWallets.id, wallet.id))
        .for('update');
      const held = await transferStore.pendingHolds(tx, wallet.address, outgoing.network);
      const heldSol = held.get('') ?? 0n;
      const solNeeded = outgoing.lamportsNeeded + (outgoing.mint ? 0n : outgoing.amountRaw);
      if (outgoing.mint) {
        // Transfers spend from the associated token account, so that is the balance that counts.
        const available = tokenBalance - (held.get(outgoing.mint) ?? 0n);
        if (available < outgoing.amountRaw) {
          throw insufficient(
            `Insufficient token balance: ${decimalFromRaw(available > 0n ? available : 0n, outgoing.decimals)} available, ${decimalFromRaw(outgoing.amountRaw, outgoing.decimals)} asked.`,
          );
        }
      }
      if (lamports - heldSol < solNeeded) {
        throw insufficient(
          `Insufficient SOL: ${decimalFromRaw(lamports - heldSol > 0n ? lamports - heldSol : 0n, 9)} available, ${decimalFromRaw(solNeeded, 9)} needed including network fees and rent.`,
        );
      }
      const { wire, signature } = await this.sign(wallet, outgoing.transaction);
      const inserted = await transferStore.insertTransfer(tx, {
        userId: principal.userId,
        environment: principal.environment,
        network: outgoing.network,
        kind: outgoing.kind,
        fromAddress: wallet.address,
        toAddress: outgoing.to,
        mint: outgoing.mint,
        amountRaw: outgoing.amountRaw,
        decimals: outgoing.decimals,
        feeLamports: outgoing.lamportsNeeded,
        outputMint: outgoing.outputMint ?? null,
        outputAmountRaw: outgoing.outputAmountRaw ?? null,
        quoteId: outgoing.quoteId ?? null,
        signature,
        wire: Buffer.from(wire).toString('base64'),
        lastValidBlockHeight: outgoing.lastValidBlockHeight,
        createdAt: now,
        updatedAt: now,
      });
      await recordTransferEvent(tx, inserted, now);
      await this.idempotency.attach(tx, claim, inserted.id);
      await enqueueJob(tx, {
        kind: CONFIRM_JOB,
        payload: { transferId: inserted.id },
        tenant: inserted.userId,
        runAt: new Date(now.getTime() + CONFIRM_EVERY_MS),
      });
      return inserted;
    });
    return this.sendAndWait(row, chain, claim);
  }

  /** The confirmation job's step: settled when the chain knows; re-broadcast while the blockhash lives; failed once it has expired. */
  async confirm(transferId: string): Promise<'final' | 'pending'> {
    const row = await transferStore.findTransfer(this.db, transferId);
    if (row?.status !== 'pending') return 'final';
    const chain = this.chains.chainFor(row.environment, row.network as SolanaNetwork);
    const state = await chain.signatureState(row.signature);
    if (state.state !== 'unknown') {
      await this.settle(
        row.id,
        state.state === 'confirmed' ? 'confirmed' : 'failed',
        state.state === 'failed' ? state.error : null,
      );
      return 'final';
    }
    if ((await chain.blockHeight()) > row.lastValidBlockHeight) {
      // Past its last valid block height it can never land: one last look, then it fails and its hold is released.
      const last = await chain.signatureState(row.signature);
      if (last.state === 'confirmed') await this.settle(row.id, 'confirmed', null);
      else
        await this.settle(
          row.id,
          'failed',
          last.state === 'failed'
            ? last.error
            : 'Expired: the blockhash expired before the network confirmed the transaction.',
        );
      return 'final';
    }
    await this.broadcast(row, chain);
    return 'pending';
  }

  async bySignature(principal: Principal, signature: string): Promise<TransferView> {
    const row = await transferStore.findOwnedBySignature(this.db, principal, signature);
    if (!row) throw new DomainError('NOT_FOUND', `Solana transaction ${JSON.stringify(signature)} was not found.`);
    return transferView(row);
  }

  async list(principal: Principal, limit = 20): Promise<TransferView[]> {
    return (await transferStore.listOwned(this.db, principal, Math.min(Math.max(limit, 1), 100))).map(transferView);
  }

  /**
   * Sends, then waits a bounded time for the chain's word; the answer is stored under the key in
   * the commit that settles the transfer (or on its own when nothing settles it yet).
   */
  private async sendAndWait(row: SolanaTransferRow, chain: SolanaChain, claim: Claim | null): Promise<TransferView> {
    const rejected = await this.broadcast(row, chain);
    if (rejected) return this.settled(row.id, 'failed', rejected, claim);
    // A chain that executes what it receives (the sandbox) confirmed the transfer in that commit.
    const sent = (await transferStore.findTransfer(this.db, row.id))!;
    if (sent.status !== 'pending') return this.finished(claim, transferView(sent));
    const deadline = Date.now() + this.confirmWaitMs;
    while (Date.now() < deadline) {
      const state = await chain.signatureState(row.signature).catch(() => ({ state: 'unknown' }) as const);
      if (state.state === 'confirmed') return this.settled(row.id, 'confirmed', null, claim);
      if (state.state === 'failed') return this.settled(row.id, 'failed', state.error, claim);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Not confirmed yet: the answer carries the signature; the final state arrives as an event.
    return this.finished(claim, transferView((await transferStore.findTransfer(this.db, row.id))!));
  }

  /** Stores the answer under the key (one statement: there is nothing else to commit with it). */
  private async finished(claim: Claim | null, view: TransferView): Promise<TransferView> {
    await this.idempotency.finish(this.db, claim, view);
    return view;
  }

  /** Sends the stored transaction; returns the reason when the chain refuses it outright. Network trouble is left to the job. */
  private async broadcast(row: SolanaTransferRow, chain: SolanaChain): Promise<string | undefined> {
    try {
      await chain.sendTransaction(Buffer.from(row.wire, 'base64'));
      return undefined;
    } catch (error) {
      // A node that already has it (or litesvm's AlreadyProcessed) is no refusal: the first send landed.
      if (error instanceof TransactionRejected && !/already ?(been )?processed/i.test(error.reason))
        return error.reason;
      return undefined;
    }
  }

  /** Settles, and answers the row as it now is (the chain may have settled it already), storing the answer under the key in the same commit. */
  private async settled(
    id: string,
    status: 'confirmed' | 'failed',
    error: string | null,
    claim: Claim | null,
  ): Promise<TransferView> {
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const row = await transferStore.settleTransfer(tx, id, status, error, now);
      if (row) await recordTransferEvent(tx, row, now);
      const view = transferView(row ?? (await transferStore.findTransfer(tx, id))!);
      await this.idempotency.finish(tx, claim, view);
      return view;
    });
  }

  private async settle(
    id: string,
    status: 'confirmed' | 'failed',
    error: string | null,
  ): Promise<SolanaTransferRow | undefined> {
    const now = this.clock.now();
    return this.db.transaction(async (tx: Tx) => {
      const row = await transferStore.settleTransfer(tx, id, status, error, now);
      if (row) await recordTransferEvent(tx, row, now);
      return row;
    });
  }

  private async sign(
    wallet: SolanaWalletRow,
    transaction: Transaction | VersionedTransaction,
  ): Promise<{ wire: Uint8Array; signature: string }> {
    const signer = new PublicKey(wallet.address);
    if (transaction instanceof VersionedTransaction) {
      const signature = await this.wallets.sign(wallet, transaction.message.serialize());
      transaction.addSignature(signer, signature);
      return { wire: transaction.serialize(), signature: base58.decode(transaction.signatures[0]!) };
    }
    const signature = await this.wallets.sign(wallet, transaction.serializeMessage());
    transaction.addSignature(signer, Buffer.from(signature));
    // Not verified again in JavaScript (a millisecond of curve arithmetic): node's ed25519 just made
    // it with the wallet's key, and a chain refuses a bad signature anyway.
    return {
      wire: transaction.serialize({ verifySignatures: false }),
      signature: base58.decode(transaction.signatures[0]!.signature!),
    };
  }
}

const insufficient = (message: string) => new DomainError('INSUFFICIENT_FUNDS', message, { field: 'amount' });
