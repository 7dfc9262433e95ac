import { randomUUID } from 'node:crypto';
import { encodeFunctionData, erc20Abi, parseTransaction, serializeTransaction, toHex } from 'viem';
import type { ChainSendRow } from '../../db/chain-schema.js';
import type { Database, Executor } from '../../db/client.js';
import { runIn, statement } from '../../db/plain-sql.js';
import { chainSendOf } from '../chain/chain-send-store.js';
import { TransactionRejected } from '../chain/chain-adapter.js';
import { type AssetNeed, type AssetSpent, assetHolds } from '../assets/asset-holds.js';
import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { checkFields } from '../field-checks.js';
import { type Idempotency, toStorable } from '../idempotency/idempotency.js';
import { formatUnits } from '../money/decimal.js';
import { KeyRaceError, type KeyRef } from '../money/key-claim.js';
import { openKeyedChainSend } from '../chain/open-send.js';
import type { EvmChain, EvmReceipt } from './evm-chain.js';
import type { EvmChains } from './evm-chains.js';
import { checkEvmAddress } from './evm-keys.js';
import { evmRawFromDecimal } from './evm-amounts.js';
import { takeNonce } from './evm-nonces.js';
import { evmSendStore, moveEvmSend, NATIVE_ASSET } from './evm-send-store.js';
import { settleSwapOutput } from './evm-swap-output.js';
import { type EvmUnsigned, evmSigning, hexBytes, prepareEvm } from './evm-signing.js';
import { type EvmSendView, evmSendView } from './evm-send-view.js';
import { EVM, type EvmWalletRow, type EvmWallets } from './evm-wallets.js';
import { checkEvmNetwork, checkEvmToken, EVM_NETWORK_SPECS, type EvmNetwork, type EvmTokenSpec } from './networks.js';

/** How often the confirmation job asks the chain and re-broadcasts. */
export const EVM_CONFIRM_EVERY_MS = 2_000;
/** A send not mined this long after it was stored is replaced by a cancel at a higher fee (it was dropped). */
export const EVM_DROPPED_AFTER_MS = 60_000;
/** Gas of a plain transfer of the native coin to an account without code. */
export const NATIVE_TRANSFER_GAS = 21_000n;
/**
 * The gas limit of an ERC-20 transfer the chain could not estimate (it would revert now, e.g. the
 * balance is short): the hold is judged with it and refuses the send before anything is signed.
 */
const TOKEN_TRANSFER_GAS = 100_000n;
/** A replacement must raise both fees by at least 10% (the rule nodes apply); 12.5% leaves room. */
const bump = (fee: bigint) => (fee * 1125n) / 1000n + 1n;

export interface EvmSendInput {
  to?: unknown;
  amount?: unknown;
}

/**
 * A transaction to sign for a wallet, with what it takes from it: a transfer, or a leg of a swap
 * (an approval, which moves nothing but its fee; the router call, which pays `call.value` or the
 * token amount in and is credited `swap.outputAsset`).
 */
export interface Outgoing {
  network: EvmNetwork;
  kind: 'native' | 'token' | 'approve' | 'swap';
  /** The recipient (for a token, the holder credited; the transaction goes to the contract). */
  to: `0x${string}`;
  token: { spec: EvmTokenSpec; contract: string } | null;
  amountRaw: bigint;
  decimals: number;
  call: { to: `0x${string}`; data?: `0x${string}`; value: bigint };
  /** A swap leg's expected output (settled from the receipt) and its quote. */
  swap?: { outputAsset: string; outputAmountRaw: bigint; quoteId: string };
  /** The gas limit when the chain cannot estimate it yet (a swap signed before its approval is mined). */
  fallbackGas?: bigint;
}

/** The gas limit and fee terms a transaction is signed with. */
export interface GasTerms {
  gas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** What a signed transaction may cost in native coin at most, and the terms it is signed with. */
interface FeePlan extends GasTerms {
  dataFee: bigint;
  cap: bigint;
}

/** The type-2 transaction a wallet signs for `call`. */
function unsignedOf(chainId: number, call: Outgoing['call'], nonce: bigint, terms: GasTerms): EvmUnsigned {
  return {
    type: 'eip1559',
    chainId,
    nonce: Number(nonce),
    to: call.to,
    value: call.value,
    ...(call.data ? { data: call.data } : {}),
    gas: terms.gas,
    maxFeePerGas: terms.maxFeePerGas,
    maxPriorityFeePerGas: terms.maxPriorityFeePerGas,
  };
}

/**
 * The data fee of a transaction making `call` on `network`, at the largest it can be once signed
 * (nonce and signature at their longest), so never less than the chain charges; 0 on networks
 * without one. What a send holds for it, and what a swap's quote counts for each of its legs.
 */
export async function widestDataFee(
  chain: EvmChain,
  network: EvmNetwork,
  call: Outgoing['call'],
  terms: GasTerms,
): Promise<bigint> {
  if (!EVM_NETWORK_SPECS[network].dataFee) return 0n;
  const widest = `0x${'ff'.repeat(32)}` as const;
  const draft = serializeTransaction(unsignedOf(chain.chainId, call, 2n ** 32n - 1n, terms), {
    r: widest,
    s: widest,
    yParity: 1,
  });
  return chain.dataFee(hexBytes(draft));
}

const REPLACEMENT_OF = statement('evm_send_replacement_v1', `select * from chain_sends where replaces = $1::uuid`);

/** The transfer field checks of a native send: the service runs them, and REST beside its schema. */
export const evmNativeSendFieldChecks = (network: unknown, input: EvmSendInput) => ({
  network: () => checkEvmNetwork(network as string),
  to: () => checkEvmAddress(input.to, 'to'),
  amountRaw: () => evmRawFromDecimal(input.amount, 18),
});

/** The transfer field checks of an ERC-20 send (the amount's decimals are the token's on that network). */
export const evmTokenSendFieldChecks = (network: unknown, token: unknown, input: EvmSendInput) => ({
  network: () => checkEvmNetwork(network as string),
  token: () => checkEvmToken(checkEvmNetwork(network as string), token as string),
  to: () => checkEvmAddress(input.to, 'to'),
});

/**
 * Outgoing transfers of custodial EVM wallets, to the order Solana's follow (chain/chain-sends.ts)
 * with a nonce: check the input, read the chain (fee terms, gas, balances), then in ONE transaction
 * claim the key and lock the wallet, take the address's next nonce, sign with it, hold the amount
 * and the fee at its cap, and store the signed transaction; only then send. A nonce is taken only
 * by a commit that stores the transaction signed with it, and is never given to anything else: the
 * same send re-broadcast, or a cancel (a 0-value transfer to itself) at a higher fee.
 *
 * Three endings besides success (docs/evm.md): refused by the chain before it took the transaction
 * (failed at once, amount and fee released, and its nonce filled by a cancel so later nonces land);
 * mined and reverted (failed, its fee captured, the amount released); dropped (re-broadcast; not
 * mined after EVM_DROPPED_AFTER_MS, replaced by a cancel at a higher fee, and ends `replaced` when
 * the cancel lands).
 */
export class EvmTransfers {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly idempotency: Idempotency,
    private readonly wallets: EvmWallets,
    private readonly chains: EvmChains,
    private readonly confirmWaitMs: number,
    /** How long a send may stay unmined before a cancel replaces it. */
    private readonly droppedAfterMs = EVM_DROPPED_AFTER_MS,
  ) {}

  async sendNative(
    principal: Principal,
    networkArg: unknown,
    input: EvmSendInput,
    idempotencyKey: string | undefined,
  ): Promise<EvmSendView> {
    const { network, to, amountRaw } = checkFields(evmNativeSendFieldChecks(networkArg, input));
    const key = this.idempotency.keyRef(
      { userId: principal.userId, environment: principal.environment, operation: 'evm.send-native' },
      idempotencyKey,
      { network, to, amountRaw },
    );
    return this.submit(principal, key ?? null, {
      network,
      kind: 'native',
      to,
      token: null,
      amountRaw,
      decimals: EVM_NETWORK_SPECS[network].native.decimals,
      call: { to, value: amountRaw },
    });
  }

  async sendToken(
    principal: Principal,
    networkArg: unknown,
    tokenArg: unknown,
    input: EvmSendInput,
    idempotencyKey: string | undefined,
  ): Promise<EvmSendView> {
    const { network, token, to } = checkFields(evmTokenSendFieldChecks(networkArg, tokenArg, input));
    const amountRaw = evmRawFromDecimal(input.amount, token.decimals);
    const key = this.idempotency.keyRef(
      { userId: principal.userId, environment: principal.environment, operation: 'evm.send-token' },
      idempotencyKey,
      { network, token: token.symbol, to, amountRaw },
    );
    const contract = this.chains.tokenContract(principal.environment, network, token) as `0x${string}`;
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amountRaw] });
    return this.submit(principal, key ?? null, {
      network,
      kind: 'token',
      to,
      token: { spec: token, contract },
      amountRaw,
      decimals: token.decimals,
      call: { to: contract, data, value: 0n },
    });
  }

  /**
   * A swap's leg, signed, held, stored and sent as a send is (the swap's Idempotency-Key is the
   * exchange's, around all its legs): the next nonce, the fee at its cap held, and what it pays in.
   */
  submitLeg(principal: Principal, leg: Outgoing): Promise<EvmSendView> {
    return this.submit(principal, null, leg);
  }

  private async submit(principal: Principal, key: KeyRef | null, outgoing: Outgoing): Promise<EvmSendView> {
    const chain = this.chains.chainFor(principal.environment, outgoing.network);
    const wallet = await this.wallets.walletOf(principal);
    const [count, native, tokens, fees] = await Promise.all([
      chain.transactionCount(wallet.address),
      chain.nativeBalance(wallet.address),
      outgoing.token ? chain.tokenBalance(wallet.address, outgoing.token.contract) : Promise.resolve(0n),
      this.feePlan(chain, outgoing, wallet.address),
    ]);
    const now = this.clock.now();
    const id = randomUUID();
    // What leaves the wallet besides the fee: the value the call carries, or the token amount (an
    // approval moves no tokens, so none is held for it).
    const nativeNeed = fees.cap + outgoing.call.value;
    const needs: AssetNeed[] = [{ asset: NATIVE_ASSET, amount: nativeNeed, principal: outgoing.call.value }];
    if (outgoing.token && outgoing.kind !== 'approve')
      needs.push({ asset: outgoing.token.contract, amount: outgoing.amountRaw, principal: outgoing.amountRaw });
    const onChain = new Map([
      [NATIVE_ASSET, native],
      ...(outgoing.token ? [[outgoing.token.contract, tokens] as const] : []),
    ]);
    let row: ChainSendRow | undefined;
    const opened = await openKeyedChainSend<EvmSendView, ChainSendRow>(this.db, {
      store: evmSendStore,
      key,
      walletId: wallet.id,
      now,
      view: (recorded) => this.view(recorded),
      open: async (tx) => {
        const ledgerWallet = { ...principal, family: EVM, network: outgoing.network, address: wallet.address };
        // The nonce is taken here and kept only if this commit stores the transaction signed with it.
        const nonce = await takeNonce(tx, ledgerWallet, count);
        const signed = await this.sign(wallet, chain, outgoing.call, nonce, fees);
        row = {
          id,
          userId: principal.userId,
          environment: principal.environment,
          family: EVM,
          network: outgoing.network,
          kind: outgoing.kind,
          fromAddress: wallet.address,
          toAddress: outgoing.to,
          asset: outgoing.token?.contract ?? null,
          amountRaw: outgoing.amountRaw,
          decimals: outgoing.decimals,
          feeRaw: fees.cap,
          outputAsset: outgoing.swap?.outputAsset ?? null,
          outputAmountRaw: outgoing.swap?.outputAmountRaw ?? null,
          txHash: signed.hash,
          wire: Buffer.from(signed.wire).toString('base64'),
          validThroughHeight: null,
          nonce,
          block: null,
          confirmations: 0,
          replaces: null,
          status: 'pending',
          error: null,
          quoteId: outgoing.swap?.quoteId ?? null,
          createdAt: now,
          updatedAt: now,
        };
        // The sandbox chain does not post its movements to the asset ledger: what arrived is observed here.
        const held = await assetHolds.place(tx, ledgerWallet, { id, txHash: signed.hash }, needs, {
          onChain,
          observe: 'always',
          rollsBackWhenShort: true,
        });
        if (!held.placed) throw shortOf(outgoing, nativeNeed, fees, held.available);
        const recorded = await evmSendStore.record(tx, {
          row,
          confirmAt: new Date(now.getTime() + EVM_CONFIRM_EVERY_MS),
          key,
          // The one lease of every keyed operation (IDEMPOTENCY_LEASE_MS): until it is over a retry is
          // told 409; after it, answered from the stored record (a crash), never signed again.
          // Unlike a Solana send's, nothing about the transaction ends with it (an EVM nonce does not
          // expire), so it has no reason to be a lease of its own.
          leaseUntil: new Date(now.getTime() + this.idempotency.leaseMs),
        });
        if (key && !recorded.keyed) throw new KeyRaceError();
      },
    });
    if (opened) return opened.done;
    return this.sendAndWait(row!, chain, key);
  }

  /**
   * What the transaction may cost: gas estimated by the chain (a plain native transfer is 21,000;
   * others get a fifth more than estimated), the fee cap the chain offers, and on networks that
   * charge one the data fee of a transaction as large as this one can be once signed.
   */
  private async feePlan(chain: EvmChain, outgoing: Outgoing, from: string): Promise<FeePlan> {
    const [terms, estimate] = await Promise.all([
      chain.feeTerms(),
      chain
        .estimateGas({ ...outgoing.call, data: outgoing.call.data && hexBytes(outgoing.call.data), from })
        .catch((error: unknown) => {
          // It would revert now (a balance short, say): the hold refuses it with the spendable amount.
          if (error instanceof TransactionRejected) return undefined;
          throw error;
        }),
    ]);
    const gas =
      estimate === undefined
        ? (outgoing.fallbackGas ?? (outgoing.token ? TOKEN_TRANSFER_GAS : NATIVE_TRANSFER_GAS))
        : estimate === NATIVE_TRANSFER_GAS
          ? estimate
          : (estimate * 6n) / 5n;
    const plan = { gas, maxFeePerGas: terms.maxFeePerGas, maxPriorityFeePerGas: terms.maxPriorityFeePerGas };
    const dataFee = await widestDataFee(chain, outgoing.network, outgoing.call, plan);
    return { ...plan, dataFee, cap: gas * terms.maxFeePerGas + dataFee };
  }

  private sign(wallet: EvmWalletRow, chain: EvmChain, call: Outgoing['call'], nonce: bigint, fees: FeePlan) {
    return evmSigning.sign(prepareEvm(unsignedOf(chain.chainId, call, nonce, fees), wallet.address), (digest) =>
      this.wallets.sign(wallet, digest),
    );
  }

  /**
   * Sends the stored transaction, then waits a bounded time for its receipt; the answer is stored
   * under the key in the commit that settles the send, or on its own when nothing has yet (the
   * final state arrives as an event).
   */
  private async sendAndWait(row: ChainSendRow, chain: EvmChain, key: KeyRef | null): Promise<EvmSendView> {
    const deadline = Date.now() + this.confirmWaitMs;
    let sent = await this.broadcast(row, chain);
    // An earlier nonce of the address, stored a moment before, may still be on its way to the
    // chain: this one is offered again until the chain takes it (past the wait, the job does).
    while (sent.early && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      sent = await this.broadcast(row, chain);
    }
    if (sent.rejected) return this.refused(row, chain, sent.rejected, key);
    for (;;) {
      const receipt = sent.delivered ? await chain.receipt(row.txHash).catch(() => undefined) : undefined;
      if (receipt) return this.settleByReceipt(row, receipt, key);
      if (Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.finished(key, await this.view((await evmSendStore.findTransfer(this.db, row.id))!));
  }

  /**
   * The confirmation job's step: settled by its receipt; a nonce used by another transaction
   * settles it by that one's; not mined: re-broadcast, and once it has waited EVM_DROPPED_AFTER_MS
   * (dropped), replaced by a cancel at a higher fee.
   */
  async confirm(sendId: string): Promise<'final' | 'pending'> {
    const row = await evmSendStore.findTransfer(this.db, sendId);
    if (row?.status !== 'pending') return 'final';
    const chain = this.chains.chainFor(row.environment, row.network as EvmNetwork);
    const receipt = await chain.receipt(row.txHash);
    if (receipt) {
      await this.settleByReceipt(row, receipt, null);
      return 'final';
    }
    if ((await chain.transactionCount(row.fromAddress)) > row.nonce!) {
      // Mined since its receipt was asked for, or by another transaction: its receipt, read again, tells.
      const mined = await chain.receipt(row.txHash);
      if (mined) await this.settleByReceipt(row, mined, null);
      else await this.nonceTakenElsewhere(row, chain);
      return 'final';
    }
    const replacement = await this.replacementOf(row.id);
    if (!replacement && !row.replaces && this.clock.now().getTime() - row.createdAt.getTime() >= this.droppedAfterMs)
      await this.cancel(row, chain, null, 'Dropped: not mined in time; a cancel at a higher fee replaces it.');
    else await this.broadcast(row, chain);
    return 'pending';
  }

  /** Its nonce was mined by another transaction: its cancel's or its original's, whose receipt settles both. */
  private async nonceTakenElsewhere(row: ChainSendRow, chain: EvmChain): Promise<void> {
    const other = row.replaces
      ? await evmSendStore.findTransfer(this.db, row.replaces)
      : await this.replacementOf(row.id);
    const receipt = other ? await chain.receipt(other.txHash) : undefined;
    if (other && receipt) {
      if (other.status === 'pending') await this.settleByReceipt(other, receipt, null);
      const current = (await evmSendStore.findTransfer(this.db, row.id))!;
      if (current.status === 'pending')
        await this.db.transaction((tx) =>
          moveEvmSend(tx, current, row.replaces ? 'failed' : 'replaced', this.clock.now(), {
            error: row.replaces ? 'The transaction it would have cancelled was mined first.' : current.error,
          }),
        );
      return;
    }
    await this.db.transaction((tx) =>
      moveEvmSend(tx, row, 'failed', this.clock.now(), {
        error: `Nonce ${row.nonce} was mined by a transaction this gateway did not store.`,
      }),
    );
  }

  /**
   * Refused by the chain before it took the transaction: the send fails (amount and fee released)
   * and, in the same commit, its nonce, which stays the send's, is given a cancel (a 0-value
   * transfer to itself at a higher fee) so the wallet's later nonces can land.
   */
  private async refused(row: ChainSendRow, chain: EvmChain, reason: string, key: KeyRef | null): Promise<EvmSendView> {
    const view = await this.cancel(row, chain, key, `Rejected by the network: ${reason}`);
    return view;
  }

  /**
   * Signs and stores a cancel for `row`'s nonce (replacing it), then sends it. With `failNow` (a
   * rejection) the send fails in the same commit; a dropped send stays pending until one of the
   * two lands.
   */
  private async cancel(row: ChainSendRow, chain: EvmChain, key: KeyRef | null, error: string): Promise<EvmSendView> {
    const rejected = error.startsWith('Rejected');
    const wallet = await this.walletRow(row);
    const previous = parseTransaction(toHex(Buffer.from(row.wire, 'base64')));
    const terms = await chain.feeTerms();
    const max = (a: bigint, b: bigint) => (a > b ? a : b);
    const call = { to: row.fromAddress as `0x${string}`, value: 0n };
    const plan = {
      gas: NATIVE_TRANSFER_GAS,
      maxFeePerGas: max(terms.maxFeePerGas, bump(previous.maxFeePerGas ?? 0n)),
      maxPriorityFeePerGas: max(terms.maxPriorityFeePerGas, bump(previous.maxPriorityFeePerGas ?? 0n)),
    };
    const dataFee = await widestDataFee(chain, row.network as EvmNetwork, call, plan);
    const fees: FeePlan = { ...plan, dataFee, cap: plan.gas * plan.maxFeePerGas + dataFee };
    const native = await chain.nativeBalance(row.fromAddress);
    const now = this.clock.now();
    const cancelRow = await this.db.transaction(async (tx) => {
      await evmSendStore.claimAndLock(tx, null, wallet.id, now);
      const current = (await evmSendStore.findTransfer(tx, row.id))!;
      if (current.status !== 'pending' || (await this.replacementOf(row.id, tx))) return undefined;
      if (rejected) await moveEvmSend(tx, current, 'failed', now, { error });
      const signed = await this.sign(wallet, chain, call, row.nonce!, fees);
      const cancelling: ChainSendRow = {
        ...row,
        id: randomUUID(),
        kind: 'native',
        toAddress: row.fromAddress,
        asset: null,
        amountRaw: 0n,
        decimals: EVM_NETWORK_SPECS[row.network as EvmNetwork].native.decimals,
        feeRaw: fees.cap,
        txHash: signed.hash,
        wire: Buffer.from(signed.wire).toString('base64'),
        replaces: row.id,
        status: 'pending',
        error: null,
        createdAt: now,
        updatedAt: now,
      };
      const ledgerWallet = { ...row, family: EVM, address: row.fromAddress };
      // A cancel is the nonce's own debt: it is stored and sent even when its fee cannot be held
      // (fees rose past what the wallet has spendable); the chain then charges what it charges.
      await assetHolds.place(
        tx,
        ledgerWallet,
        { id: cancelling.id, txHash: signed.hash },
        [{ asset: NATIVE_ASSET, amount: fees.cap, principal: 0n }],
        { onChain: new Map([[NATIVE_ASSET, native]]), observe: 'always' },
      );
      await evmSendStore.record(tx, {
        row: cancelling,
        confirmAt: new Date(now.getTime() + EVM_CONFIRM_EVERY_MS),
        key: null,
        leaseUntil: now,
      });
      return cancelling;
    });
    if (cancelRow) await this.broadcast(cancelRow, chain);
    const after = await this.view((await evmSendStore.findTransfer(this.db, row.id))!);
    return key ? this.finished(key, after) : after;
  }

  /**
   * Ends a send by its receipt, once: its holds captured at what it took (the amount when it
   * succeeded, the fee it paid either way; the rest released), its status moved with its event,
   * and, for a cancel that landed, the send it cancelled moved to `replaced`.
   */
  private async settleByReceipt(row: ChainSendRow, receipt: EvmReceipt, key: KeyRef | null): Promise<EvmSendView> {
    const ok = receipt.status === 'success';
    const paid = receipt.gasUsed * receipt.effectiveGasPrice + receipt.dataFee;
    // The hold caps what is captured: a fee above the cap cannot have been paid by this transaction's terms.
    // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
    const fee = paid < row.feeRaw ? paid : row.feeRaw;
    // An approval names its token and amount but moves neither: only its fee is spent.
    const sent = ok && row.kind !== 'approve' ? row.amountRaw : 0n;
    const capture = new Map<string, AssetSpent>([
      [NATIVE_ASSET, row.asset ? { spent: fee, principal: 0n } : { spent: sent + fee, principal: sent }],
    ]);
    if (row.asset && row.kind !== 'approve') capture.set(row.asset, { spent: sent, principal: sent });
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      await assetHolds.settle(tx, { sendId: row.id }, { capture }, now);
      // A swap is credited what the pools paid, which the receipt says (the quote only bounded it).
      const settled = ok && row.kind === 'swap' ? await settleSwapOutput(tx, row, receipt) : row;
      const to = ok ? 'confirmed' : 'failed';
      const error = ok ? null : `Reverted on chain in block ${receipt.blockNumber}: its fee was spent.`;
      // The answer is the send as this move leaves it, stored by the move's own statement.
      const expected = await this.view({ ...settled, status: to, error: error ?? settled.error, updatedAt: now });
      const answer = key ? { key, response: { result: toStorable(expected) } } : undefined;
      const moved = await moveEvmSend(tx, settled, to, now, { error, answer, holdsSettled: true });
      if (moved && row.replaces) {
        const original = await evmSendStore.findTransfer(tx, row.replaces);
        if (original?.status === 'pending') await moveEvmSend(tx, original, 'replaced', now);
      }
      if (moved) return expected;
      // Moved meanwhile by another settlement: answered as it stands.
      const view = await this.view((await evmSendStore.findTransfer(tx, row.id))!);
      if (key) await evmSendStore.answer(tx, key, { result: toStorable(view) });
      return view;
    });
  }

  /**
   * Sends the stored transaction. `rejected`: the chain refused it outright. A chain that already
   * has it is no refusal, nor one that wants an earlier nonce first (`early`: the earlier send is
   * stored and on its way); network trouble is the job's to retry.
   */
  private async broadcast(
    row: ChainSendRow,
    chain: EvmChain,
  ): Promise<{ rejected?: string; delivered: boolean; early?: true }> {
    try {
      const publicKey = this.wallets.publicKeyOf(row.fromAddress);
      await chain.sendRaw(Buffer.from(row.wire, 'base64'), publicKey ? { publicKey } : undefined);
      return { delivered: true };
    } catch (error) {
      if (!(error instanceof TransactionRejected)) return { delivered: false };
      if (/already known|known transaction|already imported/i.test(error.reason)) return { delivered: true };
      if (/nonce too high|future nonce|nonce gap/i.test(error.reason)) return { delivered: false, early: true };
      // Too low: the nonce was mined already (this transaction, or its cancel): the receipt says which.
      if (/nonce too low/i.test(error.reason)) return { delivered: true };
      return { rejected: error.reason, delivered: false };
    }
  }

  async byHash(principal: Principal, hash: string): Promise<EvmSendView> {
    const row = await evmSendStore.findOwnedByHash(this.db, principal, hash);
    if (!row) throw new DomainError('NOT_FOUND', `EVM transaction ${JSON.stringify(hash)} was not found.`);
    return this.view(row);
  }

  /** The caller's own send by id; null for anyone else's or none (node(id:) reads it so). */
  async byId(principal: Principal, id: string): Promise<EvmSendView | null> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
    const row = await evmSendStore.findTransfer(this.db, id);
    if (!row || row.userId !== principal.userId || row.environment !== principal.environment) return null;
    return this.view(row);
  }

  async list(principal: Principal, limit = 20): Promise<EvmSendView[]> {
    const rows = await evmSendStore.listOwned(this.db, principal, Math.min(Math.max(limit, 1), 100));
    return Promise.all(rows.map((row) => this.view(row)));
  }

  private async finished(key: KeyRef | null, view: EvmSendView): Promise<EvmSendView> {
    if (key) await evmSendStore.answer(this.db, key, { result: toStorable(view) });
    return view;
  }

  private async replacementOf(id: string, db: Executor = this.db): Promise<ChainSendRow | undefined> {
    const [row] = await runIn(db, REPLACEMENT_OF, [id]);
    return row ? chainSendOf(row) : undefined;
  }

  private async walletRow(row: ChainSendRow): Promise<EvmWalletRow> {
    return this.wallets.walletOf({ userId: row.userId, environment: row.environment } as Principal);
  }

  private async view(row: ChainSendRow): Promise<EvmSendView> {
    const network = row.network as EvmNetwork;
    const symbol = row.asset
      ? (this.chains.tokenOf(row.environment, network, row.asset)?.symbol ?? 'ERC20')
      : EVM_NETWORK_SPECS[network].native.symbol;
    return evmSendView(row, symbol);
  }
}

const insufficient = (message: string) => new DomainError('INSUFFICIENT_FUNDS', message, { field: 'amount' });

/** The refusal of a send the wallet's spendable balances (the asset ledger's available) do not cover. */
function shortOf(
  outgoing: Outgoing,
  nativeNeed: bigint,
  fees: FeePlan,
  available: ReadonlyMap<string, bigint>,
): DomainError {
  const spec = EVM_NETWORK_SPECS[outgoing.network];
  const coin = spec.native;
  if (outgoing.token) {
    const tokens = available.get(outgoing.token.contract) ?? 0n;
    if (tokens < outgoing.amountRaw)
      return insufficient(
        `Insufficient ${outgoing.token.spec.symbol} on ${outgoing.network}: ${formatUnits(tokens, outgoing.decimals)} spendable, ${formatUnits(outgoing.amountRaw, outgoing.decimals)} asked.`,
      );
  }
  const gas = `${formatUnits(fees.cap, coin.decimals)} ${coin.symbol} of gas (${fees.gas} gas at ${fees.maxFeePerGas} wei at most${fees.dataFee > 0n ? `, plus a data fee of ${formatUnits(fees.dataFee, coin.decimals)}` : ''})`;
  return insufficient(
    `Insufficient ${coin.symbol} on ${outgoing.network}: ${formatUnits(available.get(NATIVE_ASSET) ?? 0n, coin.decimals)} spendable, ${formatUnits(nativeNeed, coin.decimals)} needed${outgoing.token ? ` for ${gas}` : `: the amount and ${gas}`}.`,
  );
}
