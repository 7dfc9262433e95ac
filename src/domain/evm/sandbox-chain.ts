import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTxFromRLP, type TypedTransaction } from '@ethereumjs/tx';
import { type Address, bytesToHex, createAddressFromString, hexToBytes } from '@ethereumjs/util';
import { getAddress, type Hex, isAddress } from 'viem';
import type { Database } from '../../db/client.js';
import { TransactionRejected, type TxState } from '../chain/chain-adapter.js';
import { badInput, DomainError } from '../errors.js';
import type {
  EvmCall,
  EvmFeeTerms,
  EvmLog,
  EvmLogFilter,
  EvmNativeTransfer,
  EvmReceipt,
  EvmSandboxChain,
  EvmSandboxMempool,
} from './evm-chain.js';
import { checkEvmToken, EVM_NETWORK_SPECS, type EvmNetwork } from './networks.js';
import { type ChainHead, evmChainRows as rows, type PooledTx } from './sandbox-chain-rows.js';
import { MARKET_MAKER_ADDRESS, MARKET_MAKER_KEY } from './sandbox-pools.js';
import { balanceOfCall, FAUCET_ADDRESS, genesisContracts, mintCall, revertReason } from './sandbox-contracts.js';
import { baseFeeOf, dataFeeOf, sandboxFeeTerms } from './sandbox-fees.js';
import { Mutex } from './sandbox-mutex.js';
import { SandboxTrieNodes, type TrieNodeCache } from './sandbox-trie-nodes.js';
import { BLOCK_GAS_LIMIT, type BlockPlace, commonOf, NotIncludable, type RanTx, SandboxVm } from './sandbox-vm.js';

/** Transactions one block takes from the mempool at most; the rest go in the next. */
const MAX_BATCH = 256;
/** How often an instance waiting on another's block production looks again. */
const POLL_MS = 15;
/** Transactions verified on arrival kept with their recovered sender, so mining them skips the recovery. */
const VERIFIED_KEPT = 20_000;
/** Receipts of the blocks this process committed, kept for the senders that ask a moment later. */
const RECEIPTS_KEPT = 4_096;
const FAUCET = createAddressFromString(FAUCET_ADDRESS);

/** The process's VM over a network's state, and the head it reflects. */
interface Loaded {
  vm: SandboxVm;
  nodes: SandboxTrieNodes;
  head: ChainHead;
}

/** A transaction to include: from the mempool, or the faucet's own. */
interface Candidate {
  hash: Hex;
  raw: Uint8Array;
  tx: TypedTransaction;
  pooled: boolean;
}

/** A sent transaction waiting for its check; told whether the mempool holds it (paused). */
interface Admission {
  tx: TypedTransaction;
  hash: Hex;
  wire: Uint8Array;
  resolve: (paused: boolean) => void;
  reject: (error: unknown) => void;
}

interface Waiter {
  resolve: (hash: string) => void;
  reject: (error: unknown) => void;
}

class StaleHead extends Error {}

export interface SandboxEvmChainOptions {
  /** This instance's name as a block producer (random by default). */
  producerId?: string;
  /** How long a producer's lease holds without being renewed (a crashed producer blocks others this long). */
  leaseMs?: number;
}

/**
 * One sandbox EVM network, shared by every instance through the database (src/db/evm-sandbox-schema.ts).
 *
 * State is a Merkle Patricia trie whose nodes are stored by hash; the head row names the root.
 * Each instance runs ethereumjs against its own warm copy (nodes cached by hash, so catching up
 * with another instance's block reads only the nodes it wrote), with no database transaction open.
 * A block is produced by the instance holding the network's producer lease: it takes a batch from
 * the stored mempool, runs it, and commits the nodes, the block, the receipts and the head in one
 * short transaction that moves the head only from the block it built on; were the head moved
 * meanwhile (an expired lease), the block is dropped and built again on the new head. So a
 * transaction is mined once, whichever instance accepted it, and a restart loses nothing.
 *
 * A network nobody used has no rows: reads of it answer zero without creating it; the first
 * change (a send, the faucet, a call) builds its genesis.
 */
export class SandboxEvmChain implements EvmSandboxChain {
  readonly chainId: number;
  readonly mempool: EvmSandboxMempool;
  private loaded?: Loaded;
  /** The VM: one run or read at a time. */
  private readonly vmLock = new Mutex();
  /** This process's block production: one block at a time. */
  private readonly production = new Mutex();
  private readonly verified = new Map<string, TypedTransaction>();
  /** Receipts of transactions this process mined (a mined block never changes), by lower-case hash. */
  private readonly minedHere = new Map<string, EvmReceipt>();
  private readonly waiting = new Map<string, Waiter>();
  private readonly admissions: Admission[] = [];
  private admitting = false;
  private producing = false;
  /** Reads waiting for the VM's next read turn (see read()). */
  private readonly reads: Array<{
    create: boolean;
    run: (l: Loaded | undefined) => Promise<void>;
    fail: (error: unknown) => void;
  }> = [];
  private readTurnAsked = false;
  private again = false;
  private exchangeReady = false;
  private readonly producerId: string;
  private readonly leaseMs: number;

  constructor(
    readonly network: EvmNetwork,
    private readonly db: Database,
    private readonly cache: TrieNodeCache,
    options: SandboxEvmChainOptions = {},
  ) {
    this.chainId = EVM_NETWORK_SPECS[network].chainId;
    this.producerId = options.producerId ?? randomUUID();
    this.leaseMs = options.leaseMs ?? 10_000;
    this.mempool = {
      pause: () => this.pause(),
      release: (order) => this.release(order),
      drop: (hashes) => this.drop(hashes),
      pending: () => rows.pendingHashes(this.db, this.network),
    };
  }

  // ---- reads -------------------------------------------------------------------------------

  async nativeBalance(address: string): Promise<bigint> {
    const who = toAddress(address, 'address');
    return this.read((l) => l.vm.balanceOf(who), 0n);
  }

  async tokenBalance(owner: string, token: string): Promise<bigint> {
    const who = toAddress(owner, 'owner');
    const contract = toAddress(token, 'token');
    return this.read(async (l) => {
      const result = await l.vm.call(
        { to: hexOf(contract), data: hexToBytes(balanceOfCall(hexOf(who))) },
        nextPlace(l),
      );
      const value = result.execResult.returnValue;
      // Not a contract (no code) or not a token: it holds nothing of it.
      if (result.execResult.exceptionError || value.length < 32) return 0n;
      return BigInt(bytesToHex(value.subarray(0, 32)));
    }, 0n);
  }

  async transactionCount(address: string): Promise<bigint> {
    const who = toAddress(address, 'address');
    return this.read((l) => l.vm.nonceOf(who), 0n);
  }

  async feeTerms(): Promise<EvmFeeTerms> {
    return sandboxFeeTerms(this.network);
  }

  async estimateGas(call: EvmCall & { from: string }): Promise<bigint> {
    const result = await this.runCall(call, estimatePlace);
    const data = call.data ?? new Uint8Array();
    let intrinsic = 21_000n;
    for (const byte of data) intrinsic += byte === 0 ? 4n : 16n;
    return intrinsic + result.execResult.executionGasUsed;
  }

  async call(call: EvmCall & { from?: string }): Promise<Uint8Array> {
    return (await this.runCall(call)).execResult.returnValue;
  }

  async dataFee(signed: Uint8Array): Promise<bigint> {
    return dataFeeOf(this.network, signed);
  }

  async receipt(hash: string): Promise<EvmReceipt | undefined> {
    const lower = hash.toLowerCase();
    return this.minedHere.get(lower) ?? rows.receipt(this.db, this.network, lower);
  }

  logs(filter: EvmLogFilter): Promise<EvmLog[]> {
    return rows.logs(this.db, this.network, filter);
  }

  async nativeTransfers(range: { fromBlock: bigint; toBlock: bigint }): Promise<EvmNativeTransfer[]> {
    const mined = await rows.minedTransfers(this.db, this.network, range);
    return mined.flatMap((row) => {
      // The value is read from the signed bytes (the table keeps no column of it).
      const { value } = createTxFromRLP(row.raw, { common: this.common() });
      if (value === 0n) return [];
      return [
        { hash: row.hash, from: getAddress(row.from), to: getAddress(row.to), value, blockNumber: row.blockNumber },
      ];
    });
  }

  async txState(hash: string): Promise<TxState> {
    const receipt = await this.receipt(hash);
    if (!receipt) return { state: 'unknown' };
    if (receipt.status === 'success') return { state: 'confirmed' };
    const reason = await rows.revertReason(this.db, this.network, hash.toLowerCase());
    return { state: 'failed', error: `reverted: ${reason ?? 'no reason given'}` };
  }

  async height(): Promise<bigint> {
    return (await rows.head(this.db, this.network))?.number ?? 0n;
  }

  tokenAddress(symbol: string): string {
    const token = checkEvmToken(this.network, symbol);
    return getAddress(genesisContracts(this.network).find((c) => c.token.symbol === token.symbol)!.address);
  }

  // ---- sends -------------------------------------------------------------------------------

  /**
   * Checks a signed transaction against the chain as it is now, stores it in the mempool, and,
   * unless the mempool is paused, answers once it is mined (or, when it waits behind a nonce not
   * yet sent, once the block that could not take it is built).
   */
  async sendRaw(wire: Uint8Array, signer?: { publicKey: Uint8Array }): Promise<string> {
    const tx = this.decode(wire, signer?.publicKey);
    const hash = bytesToHex(tx.hash()) as Hex;
    const paused = await new Promise<boolean>((resolve, reject) => {
      this.admissions.push({ tx, hash, wire, resolve, reject });
      void this.admitWaiting();
    });
    this.keepVerified(hash, tx);
    if (paused) return hash;
    return new Promise<string>((resolve, reject) => {
      this.waiting.set(hash, { resolve, reject });
      this.kick();
    });
  }

  /**
   * Checks the transactions sent meanwhile against the chain as it is now, together: one look at
   * the head, one at what is mined and waiting, one insert into the mempool.
   */
  private async admitWaiting(): Promise<void> {
    if (this.admitting) return;
    this.admitting = true;
    try {
      while (this.admissions.length > 0) {
        const batch = this.admissions.splice(0, MAX_BATCH);
        await this.vmLock
          .run(async () => {
            const l = (await this.current(true))!;
            const senders = [...new Set(batch.map((a) => hexOf(a.tx.getSenderAddress())))];
            const [mined, pending] = await Promise.all([
              rows.mined(
                this.db,
                this.network,
                batch.map((a) => a.hash),
              ),
              rows.pendingNonces(this.db, this.network, senders),
            ]);
            const accepted: Admission[] = [];
            for (const admission of batch) {
              try {
                if (mined.has(admission.hash))
                  throw new TransactionRejected('already known: this transaction is already mined.');
                await this.check(l, admission, pending);
                accepted.push(admission);
              } catch (error) {
                admission.reject(error);
              }
            }
            const pooled = await rows.pool(
              this.db,
              this.network,
              accepted.map(({ tx, hash, wire }) => ({
                hash,
                sender: hexOf(tx.getSenderAddress()),
                nonce: tx.nonce,
                raw: wire,
              })),
            );
            for (const { tx, hash, resolve, reject } of accepted) {
              if (pooled.has(hash)) resolve(l.head.paused);
              else
                reject(
                  new TransactionRejected(
                    `already known: a transaction of ${hexOf(tx.getSenderAddress())} with nonce ${tx.nonce} is already waiting.`,
                  ),
                );
            }
          })
          .catch((error: unknown) => {
            for (const admission of batch) admission.reject(error);
          });
      }
    } finally {
      this.admitting = false;
      // A send that arrived as the loop was ending.
      if (this.admissions.length > 0) void this.admitWaiting();
    }
  }

  /** The transaction in `wire`, signed for this chain; TransactionRejected otherwise. */
  /**
   * `senderPublicKey`: the key of an in-process caller that signed the transaction itself
   * (EvmWallets.publicKeyOf), taken as the sender instead of recovering it from the signature.
   */
  private decode(wire: Uint8Array, senderPublicKey?: Uint8Array): TypedTransaction {
    let tx: TypedTransaction;
    try {
      tx = createTxFromRLP(wire, { common: this.common() });
    } catch (error) {
      const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
      throw new TransactionRejected(`invalid transaction: ${why}`);
    }
    if (senderPublicKey?.length === 64) tx.cache.senderPubKey = senderPublicKey;
    if (tx.type > 2)
      throw new TransactionRejected(`transaction type ${tx.type} is not accepted: send type 2 (EIP-1559).`);
    if (!tx.isSigned() || !tx.verifySignature()) throw new TransactionRejected('invalid signature.');
    if (tx.type === 0 && !('v' in tx && tx.v !== undefined && tx.v > 28n))
      throw new TransactionRejected(`transaction is not replay-protected: sign it for chain id ${this.chainId}.`);
    return tx;
  }

  /**
   * Checks a transaction as the chain is now, beside the nonces its sender has waiting (which it
   * joins when accepted); TransactionRejected says why not.
   */
  private async check(l: Loaded, { tx, wire }: Admission, pending: Map<string, Set<bigint>>): Promise<void> {
    const sender = tx.getSenderAddress();
    const from = hexOf(sender);
    const waiting = pending.get(from) ?? new Set<bigint>();
    let next = await l.vm.nonceOf(sender);
    while (waiting.has(next)) next++;
    if (tx.nonce < next)
      throw new TransactionRejected(`nonce too low: ${from} has used nonce ${tx.nonce}; the next is ${next}.`);
    if (tx.nonce > next)
      throw new TransactionRejected(
        `nonce too high: ${from}'s next nonce is ${next}, this transaction has ${tx.nonce}.`,
      );
    const baseFee = baseFeeOf(this.network);
    const feeCap = 'maxFeePerGas' in tx ? tx.maxFeePerGas : (tx as { gasPrice: bigint }).gasPrice;
    if (feeCap < baseFee) throw new TransactionRejected(`max fee per gas ${feeCap} is below the base fee ${baseFee}.`);
    if ('maxPriorityFeePerGas' in tx && tx.maxPriorityFeePerGas > tx.maxFeePerGas)
      throw new TransactionRejected('max priority fee per gas is above max fee per gas.');
    const intrinsic = tx.getIntrinsicGas();
    if (tx.gasLimit < intrinsic)
      throw new TransactionRejected(`intrinsic gas too low: gas limit ${tx.gasLimit}, needs at least ${intrinsic}.`);
    if (tx.gasLimit > BLOCK_GAS_LIMIT)
      throw new TransactionRejected(`gas limit ${tx.gasLimit} is above the block gas limit ${BLOCK_GAS_LIMIT}.`);
    const dataFee = dataFeeOf(this.network, wire);
    const needed = tx.gasLimit * feeCap + tx.value + dataFee;
    const balance = await l.vm.balanceOf(sender);
    if (balance < needed)
      throw new TransactionRejected(
        `insufficient funds for gas × fee cap + value${dataFee > 0n ? ' + data fee' : ''}: ${from} has ${balance} wei, needs ${needed}.`,
      );
    waiting.add(tx.nonce);
    pending.set(from, waiting);
  }

  /**
   * Credits `to` with native coin (a transfer from the faucet's account) or mints a token (the
   * token's `mint`, called by its minter, the faucet: a Transfer log from address 0), in a block of
   * its own, even while the mempool is paused.
   */
  async faucet(to: string, asset: { native: true } | { token: string }, amount: bigint): Promise<string> {
    const recipient = hexOf(toAddress(to, 'to'));
    if (amount <= 0n || amount >= 2n ** 128n) throw badInput('amount', 'amount must be positive and below 2^128.');
    const token = 'token' in asset ? (this.tokenAddress(asset.token).toLowerCase() as Hex) : undefined;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const produced = await this.produce(async (l) => {
        const tx = l.vm.faucetTx({
          nonce: await l.vm.nonceOf(FAUCET),
          to: token ?? recipient,
          value: token ? 0n : amount,
          data: token ? hexToBytes(mintCall(recipient, amount)) : undefined,
          gasLimit: token ? 200_000n : 21_000n,
        });
        const hash = bytesToHex(tx.hash()) as Hex;
        return { candidates: [{ hash, raw: tx.serialize(), tx, pooled: false }], answer: hash };
      });
      if (produced?.answer) return produced.answer;
      if (Date.now() > deadline)
        throw new DomainError('SERVICE_UNAVAILABLE', 'The sandbox chain is busy: try again in a moment.');
      await sleep(POLL_MS);
    }
  }

  /**
   * Deploys the sandbox exchange (Uniswap V2's factory and Router02, its pools seeded by the market
   * maker) unless it is there: the market maker's nonce says how far the deployment went, so a
   * network created before the exchange existed, or a deployment a crash cut short, is finished
   * here, and a second caller (or instance) finds it done. Runs as the network's block producer, a
   * block per batch of steps that fits the block gas limit.
   */
  async ensureExchange(): Promise<void> {
    if (this.exchangeReady) return;
    const { exchangeDeployment } = await import('./sandbox-exchange.js');
    const deployment = exchangeDeployment(this.network);
    const maker = createAddressFromString(MARKET_MAKER_ADDRESS);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const produced = await this.produce(async (l) => {
        const next = await l.vm.nonceOf(maker);
        if (next >= BigInt(deployment.steps.length)) return undefined;
        const candidates: Candidate[] = [];
        const add = (tx: TypedTransaction) =>
          candidates.push({ hash: bytesToHex(tx.hash()) as Hex, raw: tx.serialize(), tx, pooled: false });
        if (next === 0n && (await l.vm.balanceOf(maker)) === 0n) {
          let nonce = await l.vm.nonceOf(FAUCET);
          add(l.vm.faucetTx({ nonce: nonce++, to: MARKET_MAKER_ADDRESS, value: deployment.native, gasLimit: 21_000n }));
          for (const mint of deployment.mints)
            add(
              l.vm.faucetTx({
                nonce: nonce++,
                to: mint.contract,
                data: hexToBytes(mintCall(MARKET_MAKER_ADDRESS, mint.amount)),
                gasLimit: 200_000n,
              }),
            );
        }
        deployment.steps.slice(Number(next)).forEach((step, i) => {
          add(l.vm.sandboxTx(MARKET_MAKER_KEY, { ...step, nonce: next + BigInt(i) }));
        });
        return { candidates, answer: true, more: true };
      });
      if (produced !== undefined) break;
      if (Date.now() > deadline)
        throw new DomainError('SERVICE_UNAVAILABLE', 'The sandbox chain is busy: try again in a moment.');
      await sleep(POLL_MS);
    }
    if ((await this.transactionCount(MARKET_MAKER_ADDRESS)) < BigInt(deployment.steps.length))
      throw new DomainError('SERVICE_UNAVAILABLE', 'The sandbox exchange is being deployed: try again in a moment.');
    this.exchangeReady = true;
  }

  // ---- the mempool ---------------------------------------------------------------------------

  private async pause(): Promise<void> {
    await this.vmLock.run(() => this.current(true));
    await rows.setPaused(this.db, this.network, true);
  }

  private async release(order: string[] = []): Promise<void> {
    await this.db.transaction(async (tx) => {
      await rows.prioritize(tx, this.network, order);
      await rows.setPaused(tx, this.network, false);
    });
    // Mined before answering: another instance holding the lease mines them, or this one does once it may.
    const deadline = Date.now() + 30_000;
    while (!(await this.produceBlocks())) {
      if (Date.now() > deadline)
        throw new DomainError('SERVICE_UNAVAILABLE', 'The sandbox chain is busy: try again in a moment.');
      await sleep(POLL_MS);
    }
  }

  private async drop(hashes: string[]): Promise<void> {
    const lower = hashes.map((h) => h.toLowerCase());
    await rows.unpool(this.db, this.network, lower);
    for (const hash of lower) this.verified.delete(hash);
  }

  // ---- block production ----------------------------------------------------------------------

  /** Starts (or extends) this process's production for transactions waiting on it. */
  private kick(): void {
    if (this.producing) {
      this.again = true;
      return;
    }
    this.producing = true;
    void this.produceForWaiters().finally(() => {
      this.producing = false;
      // A send that arrived as the loop was ending.
      if (this.waiting.size > 0) this.kick();
    });
  }

  private async produceForWaiters(): Promise<void> {
    try {
      for (;;) {
        this.again = false;
        const produced = await this.produceBlocks();
        await this.settleMinedElsewhere();
        if (this.again) continue;
        if (produced) {
          // Nothing left this chain can mine now: what still waits is held (paused, or behind a nonce).
          for (const [hash, waiter] of this.waiting) waiter.resolve(hash);
          this.waiting.clear();
        }
        if (this.waiting.size === 0) return;
        await sleep(POLL_MS);
      }
    } catch (error) {
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    }
  }

  /** Answers waiters whose transactions another instance mined. */
  private async settleMinedElsewhere(): Promise<void> {
    if (this.waiting.size === 0) return;
    for (const hash of await rows.mined(this.db, this.network, [...this.waiting.keys()])) {
      this.waiting.get(hash)?.resolve(hash);
      this.waiting.delete(hash);
    }
  }

  /** Mines blocks from the mempool until nothing more can be mined; false when another instance produces now. */
  private async produceBlocks(): Promise<boolean> {
    const done = await this.produce(async (l) => {
      if (l.head.paused) return undefined;
      const pooled = await rows.pooled(this.db, this.network, MAX_BATCH);
      if (pooled.length === 0) return undefined;
      return { candidates: pooled.map((p) => this.candidate(p)), answer: true, more: true };
    });
    return done !== undefined;
  }

  /**
   * Runs `build` as this network's producer: takes the lease (undefined when another instance
   * holds it), then builds and commits blocks from what `build` chooses until it chooses nothing
   * (or, for a one-block job, once), then gives the lease back. Answers the job's answer.
   */
  private async produce<T>(
    build: (l: Loaded) => Promise<{ candidates: Candidate[]; answer: T; more?: true } | undefined>,
  ): Promise<{ answer?: T } | undefined> {
    // The lease is a column of the head row: a network's first producer builds its genesis first.
    if (!this.loaded) await this.vmLock.run(() => this.current(true));
    return this.production.run(async () => {
      const done: { answer?: T } = {};
      let claimed = false;
      // Renewed once a third of the lease has passed: blocks in a row do not each ask for it.
      let renewAt = 0;
      // The head as of the lease's claim, or as this producer's last commit left it: no re-read.
      let known: ChainHead | undefined;
      try {
        for (;;) {
          if (Date.now() >= renewAt) {
            known = await rows.claim(this.db, this.network, this.producerId, this.leaseMs);
            if (!known) return claimed ? done : undefined;
            claimed = true;
            renewAt = Date.now() + this.leaseMs / 3;
          }
          const outcome = await this.vmLock.run(async () => {
            const l = (await this.current(true, known))!;
            known = undefined;
            const job = await build(l);
            if (!job) return 'idle' as const;
            const built = await this.commitBlock(l, job.candidates);
            if (built === 'stale') return 'again' as const;
            done.answer = job.answer;
            if (built === 'committed') known = l.head;
            // Nothing could be included: what the mempool holds waits for something else (a nonce).
            return job.more && built === 'committed' ? ('again' as const) : ('idle' as const);
          });
          if (outcome === 'idle') return done;
        }
      } finally {
        if (claimed) await rows.release(this.db, this.network, this.producerId);
      }
    });
  }

  /**
   * Runs the candidates in a new block on the head `l` holds, in order, each once its sender's
   * nonce comes up, and commits the block; answers 'stale' (nothing kept) when the head moved.
   * A candidate that can no longer be included leaves the mempool and its waiter is told why.
   */
  private async commitBlock(l: Loaded, candidates: Candidate[]): Promise<'committed' | 'stale' | 'empty'> {
    const place = nextPlace(l);
    const block = l.vm.block(place);
    const included: RanTx[] = [];
    const txs: TypedTransaction[] = [];
    const refused: Array<{ hash: Hex; reason: string }> = [];
    let gasUsed = 0n;
    let gasBooked = 0n;
    await l.vm.state.checkpoint();
    try {
      let left = candidates;
      for (let progress = true; progress && left.length > 0; ) {
        progress = false;
        const later: Candidate[] = [];
        for (const c of left) {
          if (gasBooked + c.tx.gasLimit > BLOCK_GAS_LIMIT) continue;
          const nonce = await l.vm.nonceOf(c.tx.getSenderAddress());
          if (c.tx.nonce > nonce) {
            later.push(c);
            continue;
          }
          try {
            if (c.tx.nonce < nonce) throw new NotIncludable(`nonce ${c.tx.nonce} was used meanwhile`);
            // The faucet's own transactions post nothing to L1 worth charging: no data fee.
            const ran = await l.vm.run(c.tx, c.raw, block, c.pooled ? dataFeeOf(this.network, c.raw) : 0n);
            included.push(ran);
            txs.push(c.tx);
            gasUsed += ran.gasUsed;
            gasBooked += c.tx.gasLimit;
            progress = true;
          } catch (error) {
            if (!(error instanceof NotIncludable)) throw error;
            refused.push({ hash: c.hash, reason: error.message });
          }
        }
        left = later;
      }
      await l.vm.state.commit();
    } catch (error) {
      await l.vm.state.revert();
      throw error;
    }
    if (included.length === 0 && refused.length === 0) return 'empty';
    const stateRoot = await l.vm.root();
    const committed = {
      ...place,
      hash: await l.vm.sealedHash(place, stateRoot, txs, gasUsed),
      baseFeePerGas: baseFeeOf(this.network),
      gasUsed,
      stateRoot,
    };
    const pooled = new Set(candidates.filter((c) => c.pooled).map((c) => c.hash));
    const leaving = [...included.map((t) => t.hash), ...refused.map((r) => r.hash)].filter((h) => pooled.has(h));
    try {
      await this.db.transaction(async (tx) => {
        // A transaction dropped meanwhile is not mined: build again without it.
        if (!(await rows.advance(tx, this.network, l.head.hash, committed, leaving))) throw new StaleHead();
        await rows.saveBlockContents(tx, this.network, committed, l.nodes.pending, included);
      });
    } catch (error) {
      l.nodes.forget();
      await l.vm.reset(l.head.stateRoot);
      if (error instanceof StaleHead) return 'stale';
      throw error;
    }
    l.nodes.committed();
    l.head = {
      stateRoot,
      number: committed.number,
      hash: committed.hash,
      paused: l.head.paused,
      timestamp: place.timestamp,
    };
    this.keepReceipts(committed, included);
    for (const ran of included) this.settle(ran.hash);
    for (const { hash, reason } of refused) this.settle(hash, new TransactionRejected(reason));
    return 'committed';
  }

  private settle(hash: string, error?: TransactionRejected): void {
    this.verified.delete(hash);
    const waiter = this.waiting.get(hash);
    if (!waiter) return;
    this.waiting.delete(hash);
    if (error) waiter.reject(error);
    else waiter.resolve(hash);
  }

  /** A mempool transaction as the VM runs it: verified here on arrival (sender known), or decoded again. */
  private candidate(p: PooledTx): Candidate {
    const tx = this.verified.get(p.hash) ?? createTxFromRLP(p.raw, { common: this.common() });
    return { hash: p.hash, raw: p.raw, tx, pooled: true };
  }

  /** The receipts of a committed block's transactions, as rows.receipt reads them back. */
  private keepReceipts(block: { number: bigint; hash: string }, included: RanTx[]): void {
    let logIndex = 0;
    for (const ran of included) {
      if (this.minedHere.size >= RECEIPTS_KEPT) this.minedHere.delete(this.minedHere.keys().next().value!);
      this.minedHere.set(ran.hash.toLowerCase(), {
        hash: ran.hash.toLowerCase(),
        status: ran.status,
        blockNumber: block.number,
        blockHash: block.hash,
        from: ran.from,
        to: ran.to,
        nonce: ran.nonce,
        gasUsed: ran.gasUsed,
        effectiveGasPrice: ran.effectiveGasPrice,
        dataFee: ran.dataFee,
        logs: ran.logs.map((log) => ({
          address: log.address,
          topics: [...log.topics],
          data: bytesToHex(log.data),
          blockNumber: block.number,
          transactionHash: ran.hash,
          logIndex: logIndex++,
        })),
      });
    }
  }

  private keepVerified(hash: string, tx: TypedTransaction): void {
    this.verified.set(hash, tx);
    if (this.verified.size > VERIFIED_KEPT) this.verified.delete(this.verified.keys().next().value!);
  }

  // ---- the VM and the head -------------------------------------------------------------------

  /**
   * A read of the VM at the database's head. Reads that arrive while the VM is busy (a block being
   * built, other reads) wait together and run in one turn of the VM lock, after one look at the
   * head: a send asks four things of the chain at once, and eight senders at once asked for 32
   * turns, each with its own head query, in the queue blocks are built from.
   */
  private read<T>(read: (l: Loaded) => Promise<T>, empty: T, create = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.reads.push({
        create,
        run: async (l) => {
          try {
            resolve(l ? await read(l) : empty);
          } catch (error) {
            reject(error);
          }
        },
        fail: reject,
      });
      if (this.readTurnAsked) return;
      this.readTurnAsked = true;
      void this.vmLock.run(async () => {
        this.readTurnAsked = false;
        const batch = this.reads.splice(0);
        let l: Loaded | undefined;
        try {
          l = await this.current(batch.some((r) => r.create));
        } catch (error) {
          // The head could not be read: every read of the turn fails with it.
          for (const r of batch) r.fail(error);
          return;
        }
        for (const r of batch) await r.run(l);
      });
    });
  }

  private async runCall(call: EvmCall & { from?: string }, placeOf: (l: Loaded) => BlockPlace = nextPlace) {
    const to = hexOf(toAddress(call.to, 'to'));
    const from = call.from === undefined ? undefined : hexOf(toAddress(call.from, 'from'));
    const result = await this.read(
      (l) => l.vm.call({ from, to, data: call.data, value: call.value }, placeOf(l)),
      undefined,
      true,
    );
    if (!result) throw new Error('The sandbox chain has no head after creating it.');
    const failure = result.execResult.exceptionError;
    if (failure) {
      throw new TransactionRejected(
        `execution reverted: ${revertReason(result.execResult.returnValue, failure.error)}`,
      );
    }
    return result;
  }

  /**
   * The VM at the database's head (caught up when another instance moved it; built on first use),
   * or undefined for a network never used unless `create`. Called with the VM lock held; `known`:
   * the head just read with the producer lease (or left by this producer's own commit).
   */
  private async current(create: boolean, known?: ChainHead): Promise<Loaded | undefined> {
    let head = known ?? (await rows.head(this.db, this.network));
    if (!head) {
      if (!create) return undefined;
      await this.createGenesis();
      head = (await rows.head(this.db, this.network))!;
    }
    if (!this.loaded) {
      const nodes = new SandboxTrieNodes(this.cache, (key) => rows.node(this.db, key));
      const vm = await SandboxVm.create(this.network, nodes);
      await vm.reset(head.stateRoot);
      this.loaded = { vm, nodes, head };
      // What an instance stored and did not mine before it stopped is mined now.
      if (!head.paused) setImmediate(() => this.kick());
    } else if (this.loaded.head.hash !== head.hash) {
      await this.loaded.vm.reset(head.stateRoot);
    }
    this.loaded.head = head;
    return this.loaded;
  }

  /** Builds the network's genesis and stores it as its head (unless another instance just did: it is the same). */
  private async createGenesis(): Promise<void> {
    const nodes = new SandboxTrieNodes(this.cache, async () => undefined);
    const vm = await SandboxVm.create(this.network, nodes);
    const genesis = await vm.genesis();
    await this.db.transaction(async (tx) => {
      await rows.saveNodes(tx, nodes.pending);
      await rows.createHead(tx, this.network, {
        ...genesis.place,
        hash: genesis.hash,
        baseFeePerGas: baseFeeOf(this.network),
        gasUsed: 0n,
        stateRoot: genesis.root,
      });
    });
    nodes.committed();
  }

  private common() {
    return this.loaded?.vm.common ?? commonOf(this.network);
  }
}

/**
 * The place of the block the next transactions run in: after the head, now, never before the head.
 * Blocks mined within one second share its timestamp (as Arbitrum's do): were each a second after
 * the last, a busy chain's clock would run ahead of the wall clock (340 faucet blocks in 5 s put it
 * 335 s ahead), and a swap's deadline, five minutes from the wall clock, would be past on chain.
 */
function nextPlace(l: Loaded): BlockPlace {
  const now = BigInt(Math.floor(Date.now() / 1000));
  return {
    number: l.head.number + 1n,
    parentHash: l.head.hash,
    timestamp: now > l.head.timestamp ? now : l.head.timestamp,
  };
}

/**
 * Where a gas estimate runs: the next block, but at least a second after the head. The block the
 * transaction lands in may be a later second than the estimate's, and work a contract does once a
 * second (a Uniswap V2 pair's price accumulators, written on its first trade of a new timestamp:
 * some 40,000 gas on a fresh pool) must be in the estimate, or the transaction runs out of gas.
 */
function estimatePlace(l: Loaded): BlockPlace {
  const place = nextPlace(l);
  return place.timestamp > l.head.timestamp ? place : { ...place, timestamp: l.head.timestamp + 1n };
}

function toAddress(value: string, field: string): Address {
  if (typeof value !== 'string' || !isAddress(value, { strict: false }))
    throw badInput(field, `${field} must be a 0x-prefixed 20-byte hex address.`);
  return createAddressFromString(value.toLowerCase());
}

const hexOf = (address: Address): Hex => address.toString().toLowerCase() as Hex;
