import { readsOf } from '../../db/pool-routing.js';
import { createAssociatedTokenAccountIdempotentInstruction, createTransferCheckedInstruction } from '@solana/spl-token';
import {
  PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
  type VersionedTransaction,
} from '@solana/web3.js';
import { randomUUID } from 'node:crypto';
import type { Database, Executor } from '../../db/client.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { type Idempotency, toStorable } from '../idempotency/idempotency.js';
import { transitionChainSend } from './chain-sends.js';
import { KeyRaceError, type KeyRef } from '../money/key-claim.js';
import { openKeyedChainSend } from '../chain/open-send.js';
import { TransactionRejected } from '../chain/chain-adapter.js';
import type { SolanaChain } from './chain.js';
import type { CustodialWallets, SolanaWalletRow } from './custodial-wallets.js';
import { signTransaction } from './transaction-signing.js';
import { checkNetwork, type SolanaNetwork } from './networks.js';
import { BLOCKHASH_MAX_AGE_MS } from './blockhash-lifetime.js';
import { SOL, SOL_MINT } from './native-token.js';
import type { SolanaChains } from './solana-chains.js';
import { checkAddress, decimalFromRaw, rawFromDecimal } from './token-amounts.js';
import type { TokenDirectory } from './token-directory.js';
import { type TransferView, transferView, withReference } from './transfer-view.js';

export { type TransferView, transferView, withReference } from './transfer-view.js';
import type { KeyAnswer } from '../chain/chain-sends.js';
import { CONFIRM_JOB, SOLANA, type SolanaTransferRow, sending, transferStore } from './transfer-store.js';
import { associatedTokenAddress } from './token-accounts.js';
import { checkFields } from '../field-checks.js';
import { type AssetNeed, assetHolds } from '../assets/asset-holds.js';

export { CONFIRM_JOB };
/** How long a send's key stays `running` before a retry may answer it from the stored record (a crash). */
const SEND_LEASE_MS = 60_000;
/** How often the confirmation job asks the chain, and re-broadcasts while the blockhash lives. */
export const CONFIRM_EVERY_MS = 2_000;
/** Lamports per signature (Solana's base fee). */
export const SIGNATURE_FEE = 5_000n;
/** Rent of a new associated token account (165 bytes). */
export const TOKEN_ACCOUNT_SIZE = 165;

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
    const { network, to, mint } = checkFields(tokenTransferFieldChecks(input));
    if (mint.toBase58() === SOL_MINT)
      return this.transferSol(principal, { ...input, tokenMintAddress: null }, idempotencyKey);
    const token = await this.tokens.info(principal.environment, network, mint.toBase58(), 'tokenMintAddress');
    const amountRaw = rawFromDecimal(input.amount, token.decimals);
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'solana.transfer-token' };
    const key = this.idempotency.keyRef(scope, idempotencyKey, {
      network,
      to: to.toBase58(),
      mint: mint.toBase58(),
      amountRaw,
    });
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
    return this.submit(principal, wallet, chain, key ?? null, {
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
  }

  async transferSol(
    principal: Principal,
    input: TransferInput,
    idempotencyKey: string | undefined,
  ): Promise<TransferView> {
    const { network, to, amountRaw } = checkFields(solTransferFieldChecks(input));
    const scope = { userId: principal.userId, environment: principal.environment, operation: 'solana.transfer-sol' };
    const key = this.idempotency.keyRef(scope, idempotencyKey, { network, to: to.toBase58(), amountRaw });
    const chain = this.chains.chainFor(principal.environment, network);
    const [wallet, { blockhash, lastValidBlockHeight }] = await Promise.all([
      this.wallets.walletOf(principal),
      chain.latestBlockhash(),
    ]);
    const owner = new PublicKey(wallet.address);
    return this.submit(principal, wallet, chain, key ?? null, {
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
  }

  /**
   * Signs, then in ONE transaction claims the key and locks the wallet, holds the amount and the
   * SOL fee cap in the asset ledger (refused when its spendable balance falls short; on a chain that
   * does not post its movements, what arrived is observed first), and stores the signed transaction with its
   * event, its confirmation job and the key (`running`, the transfer attached); only then sends,
   * and waits a bounded time for confirmation. `onRecorded` writes with the record (a caller that
   * keys the operation itself attaches it to its own claim).
   */
  async submit(
    principal: Principal,
    wallet: SolanaWalletRow,
    chain: SolanaChain,
    key: KeyRef | null,
    outgoing: Outgoing,
    onRecorded?: (tx: Executor, row: SolanaTransferRow) => Promise<void>,
  ): Promise<TransferView> {
    const [lamports, tokenBalance, signed] = await Promise.all([
      chain.lamports(wallet.address),
      outgoing.mint ? chain.associatedTokenAmount(wallet.address, outgoing.mint) : Promise.resolve(0n),
      // Signed before the transaction (no lock is held while signing); never stored or sent unless recorded.
      this.sign(wallet, outgoing.transaction),
    ]);
    const now = this.clock.now();
    const row: SolanaTransferRow = {
      id: randomUUID(),
      userId: principal.userId,
      environment: principal.environment,
      family: SOLANA,
      network: outgoing.network,
      kind: outgoing.kind === 'sol' ? 'native' : outgoing.kind,
      fromAddress: wallet.address,
      toAddress: outgoing.to,
      asset: outgoing.mint,
      amountRaw: outgoing.amountRaw,
      decimals: outgoing.decimals,
      feeRaw: outgoing.lamportsNeeded,
      outputAsset: outgoing.outputMint ?? null,
      outputAmountRaw: outgoing.outputAmountRaw ?? null,
      txHash: signed.signature,
      wire: Buffer.from(signed.wire).toString('base64'),
      validThroughHeight: outgoing.lastValidBlockHeight,
      // A blockhash bounds a Solana transaction's life: no nonce, so nothing replaces it.
      nonce: null,
      block: null,
      confirmations: 0,
      replaces: null,
      status: 'pending',
      error: null,
      quoteId: outgoing.quoteId ?? null,
      createdAt: now,
      updatedAt: now,
    };
    const solNeeded = outgoing.lamportsNeeded + (outgoing.mint ? 0n : outgoing.amountRaw);
    // What it holds: the amount in its asset, and SOL for fees and rent at the most they can cost.
    const needs: AssetNeed[] = [
      { asset: SOL_MINT, amount: solNeeded, principal: outgoing.mint ? 0n : outgoing.amountRaw },
    ];
    if (outgoing.mint) needs.push({ asset: outgoing.mint, amount: outgoing.amountRaw, principal: outgoing.amountRaw });
    const opened = await openKeyedChainSend<TransferView, SolanaTransferRow>(this.db, {
      store: transferStore,
      key,
      walletId: wallet.id,
      now,
      view: transferView,
      open: async (tx) => {
        const ledgerWallet = { ...principal, family: SOLANA, network: outgoing.network, address: wallet.address };
        // A chain that does not post its movements is observed: what arrived is posted with the holds.
        // One that does opens, at the chain's figure, an asset the ledger has never seen for this
        // wallet (a wallet older than the ledger); the chain was read before this transaction.
        const onChain = new Map([
          [SOL_MINT, lamports],
          ...(outgoing.mint ? [[outgoing.mint, tokenBalance] as const] : []),
        ]);
        const held = await assetHolds.place(tx, ledgerWallet, { id: row.id, txHash: row.txHash }, needs, {
          onChain,
          observe: chain.postsEveryMovement ? 'opening' : 'always',
          rollsBackWhenShort: true,
        });
        if (!held.placed) throw shortOf(outgoing, solNeeded, held.available);
        const recorded = await transferStore.record(tx, {
          row,
          confirmAt: new Date(now.getTime() + CONFIRM_EVERY_MS),
          key,
          leaseUntil: new Date(now.getTime() + SEND_LEASE_MS),
        });
        if (key && !recorded.keyed) throw new KeyRaceError();
        if (onRecorded) await onRecorded(tx, row);
      },
    });
    if (opened) return opened.done;
    return this.sendAndWait(row, chain, key);
  }

  /**
   * The confirmation job's step: settled when the chain knows; re-broadcast while the blockhash
   * lives; failed once it has expired (isExpired: a send stored with a height on an earlier scale
   * is judged by its age), after one last look at the chain, so a send that landed is never failed.
   */
  async confirm(transferId: string): Promise<'final' | 'pending'> {
    const row = await transferStore.findTransfer(this.db, transferId);
    if (row?.status !== 'pending') return 'final';
    const chain = this.chains.chainFor(row.environment, row.network as SolanaNetwork);
    const state = await chain.signatureState(row.txHash);
    if (state.state !== 'unknown') {
      await this.settle(
        row,
        state.state === 'confirmed' ? 'confirmed' : 'failed',
        state.state === 'failed' ? state.error : null,
        null,
      );
      return 'final';
    }
    if (isExpired(row, await chain.blockHeight(), this.clock.now())) {
      // Past its last valid block height it can never land: one last look, then it fails and its hold is released.
      const last = await chain.signatureState(row.txHash);
      if (last.state === 'confirmed') await this.settle(row, 'confirmed', null, null);
      else
        await this.settle(
          row,
          'failed',
          last.state === 'failed'
            ? last.error
            : 'Expired: the blockhash expired before the network confirmed the transaction.',
          null,
        );
      return 'final';
    }
    await this.broadcast(row, chain);
    return 'pending';
  }

  async bySignature(principal: Principal, signature: string): Promise<TransferView> {
    const row = await transferStore.findOwnedByHash(this.db, principal, signature);
    if (!row) throw new DomainError('NOT_FOUND', `Solana transaction ${JSON.stringify(signature)} was not found.`);
    return transferView(row);
  }

  async list(principal: Principal, limit = 20): Promise<TransferView[]> {
    const rows = await transferStore.listOwned(readsOf(this.db), principal, Math.min(Math.max(limit, 1), 100));
    return rows.map(transferView);
  }

  /**
   * Sends, then waits a bounded time for the chain's word; the answer is stored under the key in
   * the commit that settles the transfer, or on its own when the chain settled it (a chain that
   * executes what it receives records that with its own state) or nothing has yet.
   */
  private async sendAndWait(row: SolanaTransferRow, chain: SolanaChain, key: KeyRef | null): Promise<TransferView> {
    const confirmed = transferView({ ...row, status: 'confirmed' });
    // A chain that executes what it receives confirms the send (and answers its key) in its own commit.
    const answer: KeyAnswer | undefined = key ? { key, response: { result: toStorable(confirmed) } } : undefined;
    sending.set(row.txHash, { row, answer });
    let sent: { rejected?: string; delivered: boolean };
    try {
      sent = await this.broadcast(row, chain);
    } finally {
      sending.delete(row.txHash);
    }
    if (sent.rejected) return this.settle(row, 'failed', sent.rejected, key);
    // Set inside the chain's commit, which has happened when the send returned.
    if (sent.delivered && answer?.answered) return confirmed;
    const after = await transferStore.afterSend(this.db, row.id, key, { result: toStorable(confirmed) });
    if (after.answered || (after.row.status === 'confirmed' && !key)) return transferView(after.row);
    if (after.row.status !== 'pending') return this.finished(key, transferView(after.row));
    const deadline = Date.now() + this.confirmWaitMs;
    while (Date.now() < deadline) {
      const state = await chain.signatureState(row.txHash).catch(() => ({ state: 'unknown' }) as const);
      if (state.state === 'confirmed') return this.settle(row, 'confirmed', null, key);
      if (state.state === 'failed') return this.settle(row, 'failed', state.error, key);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Not confirmed yet: the answer carries the signature; the final state arrives as an event.
    return this.finished(key, transferView((await transferStore.findTransfer(this.db, row.id))!));
  }

  /** Stores the answer under the key (one statement: there is nothing else to commit with it). */
  private async finished(key: KeyRef | null, view: TransferView): Promise<TransferView> {
    if (key) await transferStore.answer(this.db, key, { result: toStorable(view) });
    return view;
  }

  /**
   * Sends the stored transaction; `rejected` is the reason when the chain refuses it outright,
   * `delivered` whether the chain took it. Network trouble is left to the job.
   */
  private async broadcast(
    row: SolanaTransferRow,
    chain: SolanaChain,
  ): Promise<{ rejected?: string; delivered: boolean }> {
    try {
      await chain.sendTransaction(Buffer.from(row.wire, 'base64'));
      return { delivered: true };
    } catch (error) {
      // A node that already has it (or litesvm's AlreadyProcessed) is no refusal: the first send landed.
      if (error instanceof TransactionRejected && !/already ?(been )?processed/i.test(error.reason))
        return { rejected: error.reason, delivered: false };
      return { delivered: false };
    }
  }

  /**
   * Moves a pending send to its end state through its lifecycle (history row and event with the
   * move; of two racing settlements one moves it), drops its confirmation job, and answers the row
   * as it now is (the chain may have settled it already), with the key's answer in the same commit.
   */
  private async settle(
    row: SolanaTransferRow,
    status: 'confirmed' | 'failed',
    error: string | null,
    key: KeyRef | null,
  ): Promise<TransferView> {
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const moved = await transitionChainSend(tx, row, status, now, { error });
      const view = transferView(moved ?? (await transferStore.findTransfer(tx, row.id))!);
      if (key) await transferStore.answer(tx, key, { result: toStorable(view) });
      return view;
    });
  }

  private async sign(
    wallet: SolanaWalletRow,
    transaction: Transaction | VersionedTransaction,
  ): Promise<{ wire: Uint8Array; signature: string }> {
    const signed = await signTransaction(transaction, wallet.address, (message) => this.wallets.sign(wallet, message));
    return { wire: signed.wire, signature: signed.hash };
  }
}

/**
 * A stored lastValidBlockHeight this many times below the chain's height is on another scale: a
 * sandbox send recorded before sandbox blockhashes followed the clock carries litesvm's standing
 * slot (about 150) where the chain now counts slots of the clock (billions). A real chain's height
 * never grows a thousandfold while a send waits.
 */
const OTHER_SCALE = 1_000n;
/**
 * The age after which a send on the other scale, unknown to the chain, is expired: its height says
 * nothing, but until its sender's lease is over an instance still running the earlier code (whose
 * chain accepts that blockhash) may be sending it, and a blockhash's lifetime after that it has
 * landed or never will (this code's chain refuses its blockhash as expired).
 */
export const OTHER_SCALE_MAX_AGE_MS = SEND_LEASE_MS + BLOCKHASH_MAX_AGE_MS;

/** Whether a pending send the chain does not know can no longer land: by its height, or by its age on another scale. */
function isExpired(row: SolanaTransferRow, height: bigint, now: Date): boolean {
  // Every Solana send is stored with its blockhash's last valid height.
  const lastValid = row.validThroughHeight ?? 0n;
  if (height <= lastValid) return false;
  if (lastValid * OTHER_SCALE >= height) return true;
  return now.getTime() - row.createdAt.getTime() > OTHER_SCALE_MAX_AGE_MS;
}

const insufficient = (message: string) => new DomainError('INSUFFICIENT_FUNDS', message, { field: 'amount' });

/** The refusal of a send the wallet's spendable balance (the asset ledger's available) does not cover. */
function shortOf(outgoing: Outgoing, solNeeded: bigint, available: ReadonlyMap<string, bigint>): DomainError {
  if (outgoing.mint) {
    // Transfers spend from the associated token account, so that is the balance that counts.
    const tokens = available.get(outgoing.mint) ?? 0n;
    if (tokens < outgoing.amountRaw)
      return insufficient(
        `Insufficient token balance on ${outgoing.network}: ${decimalFromRaw(tokens, outgoing.decimals)} available, ${decimalFromRaw(outgoing.amountRaw, outgoing.decimals)} asked.`,
      );
  }
  return insufficient(
    `Insufficient SOL on ${outgoing.network}: ${decimalFromRaw(available.get(SOL_MINT) ?? 0n, 9)} available, ${decimalFromRaw(solNeeded, 9)} needed including network fees and rent.`,
  );
}

/** A token transfer's own rules for its fields (the amount needs the mint's decimals, looked up). */
export const tokenTransferFieldChecks = (input: TransferInput) => ({
  network: () => checkNetwork(input.network),
  to: () => checkAddress(input.to, 'to'),
  mint: () => checkAddress(input.tokenMintAddress, 'tokenMintAddress'),
});

/** A SOL transfer's own rules for its fields: the service runs them, and REST beside its schema. */
export const solTransferFieldChecks = (input: TransferInput) => ({
  network: () => checkNetwork(input.network),
  to: () => checkAddress(input.to, 'to'),
  amountRaw: () => rawFromDecimal(input.amount, SOL.decimals),
});
