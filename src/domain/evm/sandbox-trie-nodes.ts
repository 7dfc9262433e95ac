import type { BatchDBOp, DB } from '@ethereumjs/util';

/**
 * Trie nodes every sandbox chain of this process has read or committed, by key (a node's hash, or
 * a contract code's prefixed hash). A key's value never changes, so a node cached once serves every
 * later block of every network, and never needs to be checked against the database again. Bounded:
 * the oldest entries go first (a cold one is read again from the database when needed).
 */
export class TrieNodeCache {
  private readonly nodes = new Map<string, Uint8Array>();

  constructor(private readonly capacity = 200_000) {}

  get(key: string): Uint8Array | undefined {
    return this.nodes.get(key);
  }

  set(key: string, value: Uint8Array): void {
    if (this.nodes.has(key)) return;
    this.nodes.set(key, value);
    if (this.nodes.size > this.capacity) this.nodes.delete(this.nodes.keys().next().value!);
  }
}

/**
 * The key-value store one network's trie runs on (ethereumjs's `DB`, keys as unprefixed hex):
 * reads come from what the block being built wrote, then the process's cache, then the database;
 * writes stay here until the block is committed (`written`, then `committed`), or are forgotten
 * with the block (`forget`). Nothing is ever deleted: the trie does not prune, and old roots stay
 * readable.
 */
export class SandboxTrieNodes implements DB<string, Uint8Array> {
  private written = new Map<string, Uint8Array>();

  constructor(
    private readonly cache: TrieNodeCache,
    private readonly load: (key: string) => Promise<Uint8Array | undefined>,
  ) {}

  async get(key: string): Promise<Uint8Array | undefined> {
    const value = this.written.get(key) ?? this.cache.get(key);
    if (value) return value;
    const loaded = await this.load(key);
    if (loaded) this.cache.set(key, loaded);
    return loaded;
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    if (!this.cache.get(key)) this.written.set(key, value);
  }

  async del(): Promise<void> {}

  async batch(ops: BatchDBOp<string, Uint8Array>[]): Promise<void> {
    for (const op of ops) if (op.type === 'put') await this.put(op.key, op.value);
  }

  shallowCopy(): DB<string, Uint8Array> {
    return this;
  }

  async open(): Promise<void> {}

  /** Nodes written since the last commit or forget, for the block's commit to store. */
  get pending(): ReadonlyMap<string, Uint8Array> {
    return this.written;
  }

  /** The block's nodes are in the database now: every later read may take them from the cache. */
  committed(): void {
    for (const [key, value] of this.written) this.cache.set(key, value);
    this.written = new Map();
  }

  /** The block was not committed: its nodes are forgotten. */
  forget(): void {
    this.written = new Map();
  }
}
