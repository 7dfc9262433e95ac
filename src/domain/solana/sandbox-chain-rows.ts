import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../db/client.js';
import type { SolanaNetwork } from './networks.js';

/** One account's whole state, as a sandbox transaction left it. */
export interface AccountState {
  address: string;
  lamports: bigint;
  /** The owning program. */
  owner: string;
  data: Uint8Array;
  executable: boolean;
}

interface AccountRow {
  address: string;
  lamports: string;
  owner: string;
  data: Uint8Array;
  executable: boolean;
}

const toState = (row: AccountRow): AccountState => ({
  address: row.address,
  lamports: BigInt(row.lamports),
  owner: row.owner,
  data: new Uint8Array(row.data),
  executable: row.executable,
});

/**
 * SQL of the sandbox chains' storage, every statement named by its function and written as plain
 * parameterised SQL (the write path runs once per sandbox transaction, one chain at a time).
 */
export const sandboxChainRows = {
  /** The chain's version, or undefined before its first use. */
  async version(db: Executor, network: SolanaNetwork): Promise<number | undefined> {
    const [row] = await queryRows<{ version: string }>(
      db,
      sql`select version::text as version from solana_sandbox_chains where network = ${network}`,
    );
    return row ? Number(row.version) : undefined;
  },

  /** Creates the chain's row at version 0 (genesis) unless another instance already did. */
  async create(db: Executor, network: SolanaNetwork): Promise<void> {
    await db.execute(
      sql`insert into solana_sandbox_chains (network, version) values (${network}, 0) on conflict (network) do nothing`,
    );
  },

  /** The whole-state snapshot a chain from before account rows starts from, if it has one. */
  async legacySnapshot(db: Executor, network: SolanaNetwork): Promise<Uint8Array | undefined> {
    const [row] = await queryRows<{ snapshot: Uint8Array | null }>(
      db,
      sql`select snapshot from solana_sandbox_chains where network = ${network}`,
    );
    return row?.snapshot ? new Uint8Array(row.snapshot) : undefined;
  },

  /** Accounts written after `version` (all of them from -1). */
  async accountsAfter(db: Executor, network: SolanaNetwork, version: number): Promise<AccountState[]> {
    const rows = await queryRows<AccountRow>(
      db,
      sql`select address, lamports::text as lamports, owner, data, executable
          from solana_sandbox_accounts where network = ${network} and version > ${version}`,
    );
    return rows.map(toState);
  },

  /** Signatures executed after `version`. */
  async signaturesAfter(db: Executor, network: SolanaNetwork, version: number): Promise<string[]> {
    const rows = await queryRows<{ signature: string }>(
      db,
      sql`select signature from solana_sandbox_signatures where network = ${network} and version > ${version}`,
    );
    return rows.map((r) => r.signature);
  },

  async executed(db: Executor, network: SolanaNetwork, signature: string): Promise<boolean> {
    const rows = await queryRows(
      db,
      sql`select 1 from solana_sandbox_signatures where network = ${network} and signature = ${signature}`,
    );
    return rows.length > 0;
  },

  /**
   * Moves the chain from `from` to the next version; undefined when it is no longer at `from`
   * (another instance wrote first). The first statement of the write: the row lock it takes is
   * the one every writer of this chain contends for, held only for the short write.
   */
  async advance(tx: Executor, network: SolanaNetwork, from: number): Promise<number | undefined> {
    const [row] = await queryRows<{ version: string }>(
      tx,
      sql`update solana_sandbox_chains set version = version + 1, updated_at = now()
          where network = ${network} and version = ${from} returning version::text as version`,
    );
    return row ? Number(row.version) : undefined;
  },

  async saveAccounts(tx: Executor, network: SolanaNetwork, version: number, accounts: AccountState[]): Promise<void> {
    if (accounts.length === 0) return;
    const values = sql.join(
      accounts.map(
        (a) =>
          sql`(${network}, ${a.address}, ${a.lamports.toString()}::numeric, ${a.owner}, ${Buffer.from(a.data)}::bytea, ${a.executable}, ${version})`,
      ),
      sql`, `,
    );
    await tx.execute(
      sql`insert into solana_sandbox_accounts (network, address, lamports, owner, data, executable, version)
          values ${values}
          on conflict (network, address) do update set lamports = excluded.lamports, owner = excluded.owner,
            data = excluded.data, executable = excluded.executable, version = excluded.version`,
    );
  },

  /** Records executed signatures; false when one of them was already recorded (it ran before). */
  async saveSignatures(tx: Executor, network: SolanaNetwork, version: number, signatures: string[]): Promise<boolean> {
    if (signatures.length === 0) return true;
    const values = sql.join(
      signatures.map((s) => sql`(${network}, ${s}, ${version})`),
      sql`, `,
    );
    const saved = await queryRows(
      tx,
      sql`insert into solana_sandbox_signatures (network, signature, version) values ${values}
          on conflict do nothing returning signature`,
    );
    return saved.length === signatures.length;
  },
};
