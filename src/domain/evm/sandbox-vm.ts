import { type Block, createBlock, createBlockHeader, genTransactionsTrieRoot } from '@ethereumjs/block';
import { type Common, createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common';
import { MerkleStateManager, Caches } from '@ethereumjs/statemanager';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { createFeeMarket1559Tx, type TypedTransaction } from '@ethereumjs/tx';
import { type Address, bytesToHex, createAddressFromString, hexToBytes, ValueEncoding } from '@ethereumjs/util';
import { createVM, runTx, type VM } from '@ethereumjs/vm';
import type { Hex } from 'viem';
import { EVM_NETWORK_SPECS, type EvmNetwork } from './networks.js';
import {
  FAUCET_ADDRESS,
  FAUCET_GENESIS_BALANCE,
  FAUCET_KEY,
  genesisContracts,
  revertReason,
} from './sandbox-contracts.js';
import { baseFeeOf, L1_FEE_VAULT } from './sandbox-fees.js';
import type { SandboxTrieNodes } from './sandbox-trie-nodes.js';

/** Gas a sandbox block holds at most (Ethereum's 30M): a batch beyond it goes on in the next block. */
export const BLOCK_GAS_LIMIT = 30_000_000n;
/** The genesis block's time, fixed so every instance builds the same genesis. */
const GENESIS_TIMESTAMP = 1_735_689_600n; // 2025-01-01T00:00:00Z
/** Priority fees go to this address (the sandbox's sequencer); base fees are burnt, as on the networks. */
const COINBASE = createAddressFromString('0x000000000000000000000000000000000000c0de');
const VAULT = createAddressFromString(L1_FEE_VAULT);

/** A block's place: what the transactions run in it see. */
export interface BlockPlace {
  number: bigint;
  parentHash: Hex;
  timestamp: bigint;
}

/** A log as the chain stores it (lower-case hex). */
export interface RanLog {
  address: Hex;
  topics: Hex[];
  data: Uint8Array;
}

/** What one included transaction did: its receipt's fields. */
export interface RanTx {
  hash: Hex;
  from: Hex;
  to: Hex | null;
  nonce: bigint;
  raw: Uint8Array;
  status: 'success' | 'reverted';
  gasUsed: bigint;
  effectiveGasPrice: bigint;
  dataFee: bigint;
  logs: RanLog[];
  revertReason: string | null;
}

/** A transaction that cannot be included (its nonce, its balance): it leaves the chain as it was. */
export class NotIncludable extends Error {}

const lower = (address: Address): Hex => address.toString().toLowerCase() as Hex;

/**
 * One network's EVM (ethereumjs, Cancun rules, the network's chain id) over its state trie, whose
 * nodes come from `nodes`. The state manager's caches stay warm from block to block; `reset` points
 * it at another root (another instance's block, or back after a refused commit).
 */
export class SandboxVm {
  private constructor(
    readonly network: EvmNetwork,
    readonly common: Common,
    readonly vm: VM,
    readonly state: MerkleStateManager,
  ) {}

  static async create(network: EvmNetwork, nodes: SandboxTrieNodes): Promise<SandboxVm> {
    const common = commonOf(network);
    const trie = new MerklePatriciaTrie({ useKeyHashing: true, db: nodes, valueEncoding: ValueEncoding.Bytes, common });
    const state = new MerkleStateManager({ trie, common, caches: new Caches() });
    const vm = await createVM({ common, stateManager: state });
    return new SandboxVm(network, common, vm, state);
  }

  /** Points the state at `root` and empties the caches of what the previous root held. */
  async reset(root: Uint8Array): Promise<void> {
    await this.state.setStateRoot(root, true);
  }

  /** The state root of everything run so far (flushing the caches into the trie's nodes). */
  root(): Promise<Uint8Array> {
    return this.state.getStateRoot();
  }

  /** The block transactions run in (the fields the EVM reads: number, time, base fee, gas limit, coinbase). */
  block(place: BlockPlace): Block {
    return createBlock(
      {
        header: {
          number: place.number,
          parentHash: hexToBytes(place.parentHash),
          timestamp: place.timestamp,
          baseFeePerGas: baseFeeOf(this.network),
          gasLimit: BLOCK_GAS_LIMIT,
          coinbase: COINBASE,
        },
      },
      { common: this.common },
    );
  }

  /** The hash of a block once its transactions ran: its header with the state root and the transactions' root. */
  async sealedHash(place: BlockPlace, stateRoot: Uint8Array, txs: TypedTransaction[], gasUsed: bigint): Promise<Hex> {
    const header = createBlockHeader(
      {
        number: place.number,
        parentHash: hexToBytes(place.parentHash),
        timestamp: place.timestamp,
        baseFeePerGas: baseFeeOf(this.network),
        gasLimit: BLOCK_GAS_LIMIT,
        gasUsed,
        coinbase: COINBASE,
        stateRoot,
        transactionsTrie: await genTransactionsTrieRoot(txs),
      },
      { common: this.common },
    );
    return bytesToHex(header.hash()) as Hex;
  }

  async nonceOf(address: Address): Promise<bigint> {
    return (await this.state.getAccount(address))?.nonce ?? 0n;
  }

  async balanceOf(address: Address): Promise<bigint> {
    return (await this.state.getAccount(address))?.balance ?? 0n;
  }

  /**
   * Runs a transaction in `block`: charges the data fee, then runs it (a revert is a receipt with
   * its nonce used and its fee spent). Throws NotIncludable, and changes nothing, when it cannot be
   * included as the state is now (its nonce is not the sender's next, its balance is short).
   */
  async run(tx: TypedTransaction, raw: Uint8Array, block: Block, dataFee: bigint): Promise<RanTx> {
    const sender = tx.getSenderAddress();
    const account = await this.state.getAccount(sender);
    const nonce = account?.nonce ?? 0n;
    if (tx.nonce !== nonce) throw new NotIncludable(`nonce ${tx.nonce} is not the sender's next (${nonce})`);
    await this.state.checkpoint();
    try {
      if (dataFee > 0n) {
        const balance = account?.balance ?? 0n;
        if (balance < dataFee) throw new NotIncludable('insufficient funds for the data fee');
        await this.state.modifyAccountFields(sender, { balance: balance - dataFee });
        const vault = (await this.state.getAccount(VAULT))?.balance ?? 0n;
        await this.state.modifyAccountFields(VAULT, { balance: vault + dataFee });
      }
      const result = await runTx(this.vm, { tx, block, skipHardForkValidation: true }).catch((error: unknown) => {
        throw new NotIncludable(error instanceof Error ? error.message : String(error));
      });
      await this.state.commit();
      const failure = result.execResult.exceptionError;
      const baseFee = block.header.baseFeePerGas ?? 0n;
      const effectiveGasPrice =
        'maxFeePerGas' in tx
          ? baseFee + minBig(tx.maxPriorityFeePerGas, tx.maxFeePerGas - baseFee)
          : (tx as { gasPrice: bigint }).gasPrice;
      return {
        hash: bytesToHex(tx.hash()) as Hex,
        from: lower(sender),
        to: tx.to ? lower(tx.to) : null,
        nonce: tx.nonce,
        raw,
        status: failure ? 'reverted' : 'success',
        gasUsed: result.totalGasSpent,
        effectiveGasPrice,
        dataFee,
        logs: (result.receipt.logs ?? []).map(([address, topics, data]) => ({
          address: bytesToHex(address).toLowerCase() as Hex,
          topics: topics.map((t) => bytesToHex(t) as Hex),
          data,
        })),
        revertReason: failure ? revertReason(result.execResult.returnValue, failure.error) : null,
      };
    } catch (error) {
      await this.state.revert();
      throw error;
    }
  }

  /**
   * Runs a call against the state as it is and undoes whatever it did (a call bumps the caller's
   * nonce and may write storage): the state after is the state before. Its accesses start cold, as
   * a transaction's do (EIP-2929: only the precompiles, caller, callee and coinbase warm): the
   * EVM's journal keeps what a call touched until the next transaction clears it, so without this
   * a gas estimate after other calls priced their slots warm and came out short (an ERC-20
   * transfer by 4,000 gas, a swap by 21,000), and the transaction signed with it ran out of gas.
   */
  async call(call: { from?: Hex; to: Hex; data?: Uint8Array; value?: bigint }, place: BlockPlace) {
    const caller = createAddressFromString(call.from ?? '0x0000000000000000000000000000000000000000');
    const to = createAddressFromString(call.to);
    const journal = this.vm.evm.journal;
    journal.cleanJournal();
    for (const [precompile] of this.vm.evm.precompiles) journal.addAlwaysWarmAddress(precompile);
    for (const address of [caller, to, COINBASE]) journal.addAlwaysWarmAddress(address.toString());
    await this.state.checkpoint();
    try {
      return await this.vm.evm.runCall({
        caller,
        origin: caller,
        to,
        data: call.data ?? new Uint8Array(),
        value: call.value ?? 0n,
        gasLimit: BLOCK_GAS_LIMIT,
        block: this.block(place),
        skipBalance: true,
      });
    } finally {
      await this.state.revert();
      // Nor does a transaction after it inherit what the call touched.
      journal.cleanJournal();
    }
  }

  /**
   * The network's genesis state, built on an empty trie: the faucet funded, then every token of
   * the network deployed by the faucet at its nonce (real creation code, real constructors), so
   * the faucet is every token's minter. Answers the genesis block's place and hash.
   */
  async genesis(): Promise<{ root: Uint8Array; hash: Hex; place: BlockPlace }> {
    const place: BlockPlace = { number: 0n, parentHash: `0x${'00'.repeat(32)}`, timestamp: GENESIS_TIMESTAMP };
    const faucet = createAddressFromString(FAUCET_ADDRESS);
    await this.state.checkpoint();
    await this.state.modifyAccountFields(faucet, { balance: FAUCET_GENESIS_BALANCE, nonce: 0n });
    await this.state.commit();
    const block = this.block(place);
    const txs: TypedTransaction[] = [];
    let gasUsed = 0n;
    for (const contract of genesisContracts(this.network)) {
      const tx = this.faucetTx({ nonce: contract.nonce, data: hexToBytes(contract.initCode), gasLimit: 5_000_000n });
      const ran = await this.run(tx, tx.serialize(), block, 0n);
      if (ran.status !== 'success')
        throw new Error(`genesis: deploying ${contract.token.symbol} failed: ${ran.revertReason}`);
      txs.push(tx);
      gasUsed += ran.gasUsed;
    }
    const root = await this.root();
    return { root, hash: await this.sealedHash(place, root, txs, gasUsed), place };
  }

  /** A transaction of the faucet's, signed with its key, paying the base fee and no tip. */
  faucetTx(fields: SandboxTxFields): TypedTransaction {
    return this.sandboxTx(FAUCET_KEY, fields);
  }

  /** A transaction of one of the sandbox's own keys (the faucet's, a market maker's), paying the base fee and no tip. */
  sandboxTx(key: Hex, fields: SandboxTxFields): TypedTransaction {
    return createFeeMarket1559Tx(
      {
        chainId: this.common.chainId(),
        nonce: fields.nonce,
        to: fields.to,
        value: fields.value ?? 0n,
        data: fields.data ?? new Uint8Array(),
        gasLimit: fields.gasLimit,
        maxFeePerGas: baseFeeOf(this.network),
        maxPriorityFeePerGas: 0n,
      },
      { common: this.common },
    ).sign(hexToBytes(key));
  }
}

export interface SandboxTxFields {
  nonce: bigint;
  to?: Hex;
  value?: bigint;
  data?: Uint8Array;
  gasLimit: bigint;
}

const commons = new Map<EvmNetwork, Common>();

/** The network's chain id under Cancun's rules (one per process: it holds no state). */
export function commonOf(network: EvmNetwork): Common {
  let common = commons.get(network);
  if (!common) {
    common = createCustomCommon({ chainId: EVM_NETWORK_SPECS[network].chainId, name: network }, Mainnet, {
      hardfork: Hardfork.Cancun,
    });
    commons.set(network, common);
  }
  return common;
}

const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b);
