import { inflateSync } from 'node:zlib';
import type { LiteSVM } from 'litesvm';
import type { Database, Tx } from '../../db/client.js';
import { type Clock, systemClock } from '../clock.js';
import { DomainError } from '../errors.js';
import { TransactionRejected } from '../chain/chain-adapter.js';
import type { SolanaNetwork } from './networks.js';
import { SandboxBlockhashes } from './sandbox-blockhash.js';
import { sandboxChainRows as rows } from './sandbox-chain-rows.js';
import { type ChainEffect, ChainWork, changedBy, restore } from './sandbox-chain-work.js';

/** What a change writes with the chain's new state, in the same short transaction; its result is the change's. */
export type ChainCommit<T> = (tx: Tx) => Promise<T>;
/** A change: runs on the in-memory chain (no database transaction open), returns what to commit with it. */
export type ChainChange<T> = (chain: ChainWork) => Promise<ChainCommit<T>> | ChainCommit<T>;

type ReadJob = {
  kind: 'read';
  /** Catch up with the database first (false: what no transaction changes, such as the blockhash). */
  fresh: boolean;
  read: (svm: LiteSVM) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
};
type ChangeJob = {
  kind: 'change';
  change: ChainChange<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
};

interface Chain {
  network: SolanaNetwork;
  /** Undefined until first use: a chain is built when something needs it, not at start. */
  svm?: LiteSVM;
  /** The database version `svm` reflects. */
  version: number;
  /** Signatures executed lately, oldest first: a re-sent transaction is refused without asking the database. */
  recent: Set<string>;
  jobs: Array<ReadJob | ChangeJob>;
  pumping: boolean;
}

const RECENT_SIGNATURES = 20_000;
/** Version conflicts one change may meet (other instances writing) before it gives up. */
const MAX_ATTEMPTS = 50;
/** Changes committed together at most (their VM runs are about a millisecond each). */
const MAX_BATCH = 64;

class StaleChain extends Error {}

/** The chain built by `genesis`, once per process: later chains start from its bytes. */
const genesisBytes = new WeakMap<(svm: LiteSVM) => void, Uint8Array>();

/**
 * The sandbox chains: one litesvm per network name, in memory, whose state lives in the database
 * as account rows (genesis, built in code, plus the latest state of every account a transaction
 * changed). A change runs on the in-memory chain with no database transaction open, then commits
 * the accounts it touched in one short transaction that first moves the chain's version on from
 * the one it ran against; when another instance moved it first, the change is undone, the chain
 * catches up on the rows written since, and the change runs again. Reads catch up the same way,
 * so every instance sees one chain and a restart loses nothing. In one process a network's reads
 * and changes take turns, and reads waiting together share one version check.
 */
export class SandboxChainStore {
  private readonly chains = new Map<SolanaNetwork, Chain>();
  /**
   * Told, in the commit that records the chain's new state, of what every transaction of the
   * commit moved (sandbox-ledger.ts posts it to the asset ledger): whatever runs a transaction
   * through this store, a send, a swap, the faucet, a test, is posted, so ledger and chain agree.
   */
  onEffects?: (tx: Tx, network: SolanaNetwork, effects: ChainEffect[]) => Promise<void>;
  /** What a transaction must carry to run: a blockhash of the last 150 slots. */
  readonly blockhashes: SandboxBlockhashes;

  constructor(
    private readonly db: Database,
    private readonly genesis: (svm: LiteSVM) => void,
    /** What a chain loaded from a snapshot-era base needs to match today's genesis. */
    private readonly upgrade: (svm: LiteSVM) => void = () => undefined,
    clock: Clock = systemClock,
  ) {
    this.blockhashes = new SandboxBlockhashes(clock);
  }

  /** Runs `change` against the chain and commits what it changed with what it writes. */
  change<T>(network: SolanaNetwork, change: ChainChange<T>): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.enqueue(network, {
        kind: 'change',
        change: change as ChainChange<unknown>,
        resolve: resolve as (v: unknown) => void,
        reject,
      }),
    );
  }

  /** Reads the committed chain, as the database has it now. */
  read<T>(network: SolanaNetwork, read: (svm: LiteSVM) => T): Promise<T> {
    return this.readJob(network, read, true);
  }

  /** Reads what no transaction changes (the blockhash, the clock, rent): no version check. */
  readFixed<T>(network: SolanaNetwork, read: (svm: LiteSVM) => T): Promise<T> {
    return this.readJob(network, read, false);
  }

  /** Whether the chain executed this signature. */
  async executed(network: SolanaNetwork, signature: string): Promise<boolean> {
    if (this.chains.get(network)?.recent.has(signature)) return true;
    return rows.executed(this.db, network, signature);
  }

  /** The networks whose chain this process has built so far. */
  loaded(): SolanaNetwork[] {
    return [...this.chains.values()].filter((c) => c.svm).map((c) => c.network);
  }

  private readJob<T>(network: SolanaNetwork, read: (svm: LiteSVM) => T, fresh: boolean): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.enqueue(network, { kind: 'read', fresh, read, resolve: resolve as (v: unknown) => void, reject }),
    );
  }

  private enqueue(network: SolanaNetwork, job: ReadJob | ChangeJob): void {
    let chain = this.chains.get(network);
    if (!chain) {
      chain = { network, version: 0, recent: new Set(), jobs: [], pumping: false };
      this.chains.set(network, chain);
    }
    chain.jobs.push(job);
    void this.pump(chain);
  }

  /** Works through a chain's queue: all waiting reads at once (one version check), then one change, and so on. */
  private async pump(chain: Chain): Promise<void> {
    if (chain.pumping) return;
    chain.pumping = true;
    try {
      // Whether the chain was just brought current by a read batch, with nothing run since.
      let current = false;
      while (chain.jobs.length > 0) {
        const reads = chain.jobs.filter((j): j is ReadJob => j.kind === 'read');
        if (reads.length > 0) {
          chain.jobs = chain.jobs.filter((j) => j.kind !== 'read');
          try {
            const fresh = reads.some((r) => r.fresh);
            await this.ready(chain, fresh);
            current = fresh;
            for (const job of reads) {
              try {
                job.resolve(job.read(chain.svm!));
              } catch (error) {
                job.reject(error);
              }
            }
          } catch (error) {
            current = false;
            for (const job of reads) job.reject(error);
          }
          continue;
        }
        // Current before running: a change refused on a balance is refused on the balance as it is.
        // Changes that arrive meanwhile join the batch.
        // A read batch that just checked the version spares the change another check (the write's
        // version step still refuses a stale chain).
        let failed: { error: unknown } | undefined;
        const checked = current;
        current = false;
        await this.ready(chain, !checked).catch((error: unknown) => {
          failed = { error };
        });
        const changes = chain.jobs.filter((j): j is ChangeJob => j.kind === 'change').slice(0, MAX_BATCH);
        chain.jobs = chain.jobs.filter((j) => !changes.includes(j as ChangeJob));
        if (failed) for (const job of changes) job.reject(failed.error);
        else await this.write(chain, changes);
      }
    } finally {
      chain.pumping = false;
    }
  }

  /**
   * Runs waiting changes one after another on the chain, then commits them together: one version
   * step, the accounts they changed and their signatures, then each change's own writes, in one
   * transaction (one commit for many transfers). Each job is answered.
   */
  private async write(chain: Chain, jobs: ChangeJob[]): Promise<void> {
    const network = chain.network;
    for (let attempt = 1; ; attempt++) {
      const ran: Array<{ job: ChangeJob; work: ChainWork; commit: ChainCommit<unknown> }> = [];
      const signatures = new Set<string>();
      for (const job of jobs) {
        const work = new ChainWork(chain.svm!, (s) => chain.recent.has(s) || signatures.has(s), {
          latest: this.blockhashes.latest(network).blockhash,
          isRecent: (blockhash) => this.blockhashes.isRecent(network, blockhash),
        });
        try {
          ran.push({ job, work, commit: await job.change(work) });
          for (const signature of work.signatures) signatures.add(signature);
        } catch (error) {
          work.undo();
          job.reject(error);
        }
      }
      if (ran.length === 0) return;
      let committed: { version: number; results: unknown[] };
      try {
        committed = await this.db.transaction(async (tx) => {
          const version = await rows.advance(tx, network, chain.version);
          if (version === undefined) throw new StaleChain();
          await rows.saveAccounts(tx, network, version, changedBy(ran.map((r) => r.work)));
          if (!(await rows.saveSignatures(tx, network, version, [...signatures])))
            throw new TransactionRejected('AlreadyProcessed: this transaction has already been processed.');
          if (this.onEffects)
            await this.onEffects(
              tx,
              network,
              ran.flatMap((r) => r.work.effects),
            );
          const results: unknown[] = [];
          for (const { commit } of ran) results.push(await commit(tx));
          return { version, results };
        });
      } catch (error) {
        // The database has none of it (or, if the commit's outcome was lost, the next catch-up brings it back).
        for (const { work } of [...ran].reverse()) work.undo();
        if (error instanceof StaleChain && attempt < MAX_ATTEMPTS) {
          try {
            await this.catchUp(chain);
          } catch (failure) {
            for (const { job } of ran) job.reject(failure);
            return;
          }
          jobs = ran.map((r) => r.job);
          continue;
        }
        const answer =
          error instanceof StaleChain
            ? new DomainError('SERVICE_UNAVAILABLE', 'The sandbox chain is busy: try again in a moment.')
            : error;
        if (ran.length === 1 || error instanceof StaleChain) {
          for (const { job } of ran) job.reject(answer);
          return;
        }
        // One of several was refused (or the database failed): each again on its own, for its own answer.
        for (const { job } of ran) await this.write(chain, [job]);
        return;
      }
      chain.version = committed.version;
      for (const signature of signatures) this.remember(chain, signature);
      ran.forEach(({ job }, i) => job.resolve(committed.results[i]));
      return;
    }
  }

  private async ready(chain: Chain, fresh: boolean): Promise<void> {
    if (!chain.svm) await this.load(chain);
    else if (fresh) await this.catchUp(chain);
  }

  /** Lays the account rows written since the version this process holds over its chain. */
  private async catchUp(chain: Chain): Promise<void> {
    const head = await rows.version(this.db, chain.network);
    if (head === chain.version) return;
    // No row, or an older one: the database is not the one this chain came from. Start again from it.
    if (head === undefined || head < chain.version) return this.load(chain);
    const [accounts, signatures] = await Promise.all([
      rows.accountsAfter(this.db, chain.network, chain.version),
      rows.signaturesAfter(this.db, chain.network, chain.version),
    ]);
    for (const account of accounts) restore(chain.svm!, account.address, account);
    for (const signature of signatures) this.remember(chain, signature);
    chain.version = head;
  }

  /** Builds the chain: genesis (or a chain's stored snapshot from before account rows) with every account row over it. */
  private async load(chain: Chain): Promise<void> {
    // The VM (some 30 MB) is loaded by the first sandbox chain that is used, not by every process at start.
    const { LiteSVM } = await import('litesvm');
    let version = await rows.version(this.db, chain.network);
    if (version === undefined) {
      await rows.create(this.db, chain.network);
      version = (await rows.version(this.db, chain.network))!;
    }
    const legacy = version > 0 ? await rows.legacySnapshot(this.db, chain.network) : undefined;
    let svm: LiteSVM;
    if (legacy) {
      svm = LiteSVM.fromBytes(inflateSync(legacy));
      this.upgrade(svm);
    } else {
      let bytes = genesisBytes.get(this.genesis);
      if (!bytes) {
        const built = new LiteSVM();
        this.genesis(built);
        genesisBytes.set(this.genesis, (bytes = built.toBytes()));
      }
      svm = LiteSVM.fromBytes(bytes);
    }
    // Signatures are remembered here and in the database, not in litesvm: its history would hold
    // a transaction whose commit was refused.
    svm.withTransactionHistory(0n);
    // litesvm knows one blockhash, forever; ChainWork checks the sandbox's, which expire.
    svm.withBlockhashCheck(false);
    for (const account of await rows.accountsAfter(this.db, chain.network, -1)) restore(svm, account.address, account);
    chain.svm = svm;
    chain.version = version;
    chain.recent.clear();
  }

  private remember(chain: Chain, signature: string): void {
    chain.recent.add(signature);
    if (chain.recent.size > RECENT_SIGNATURES) chain.recent.delete(chain.recent.values().next().value!);
  }
}
