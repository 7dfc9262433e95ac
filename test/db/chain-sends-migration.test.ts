import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/db/client.js';
import { MIGRATIONS_FOLDER } from '../../src/db/migrations-folder.js';
import { isolatedTestDatabaseUrl, onPostgres } from '../helpers/database.js';

/**
 * Solana's sends move from solana_transfers to the one chain-send table of every family with
 * nothing lost: the same ids (their jobs, events and histories point at them), the core's names
 * (mint → asset, signature → tx_hash, fee_lamports → fee_raw, 'sol' → 'native'), family 'solana'.
 * On the project's engine: PGlite replays the migrations in memory, PostgreSQL in a database of its own.
 */
describe('migration of solana_transfers into chain_sends', () => {
  const work = mkdtempSync(join(tmpdir(), 'pgw-chain-sends-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** The migrations up to the one that makes chain_sends, not including it. */
  const before = () => {
    const folder = join(work, 'before');
    cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
    const journalPath = join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: Array<{ tag: string }> };
    const at = journal.entries.findIndex((e) => e.tag.endsWith('_chain_sends'));
    expect(at).toBeGreaterThan(0);
    journal.entries = journal.entries.slice(0, at);
    writeFileSync(journalPath, JSON.stringify(journal));
    return folder;
  };

  const USER = '00000000-0000-4000-8000-0000000000c1';
  const QUOTE = '00000000-0000-4000-8000-0000000000c2';
  const rows = [
    // A SOL send still pending (its hold must survive the move), a token send, an executed swap.
    `('00000000-0000-4000-8000-00000000000a', '${USER}', 'sandbox', 'devnet', 'sol', 'From1', 'To1', null,
      100000000, 9, 5000, null, null, 'sigA', 'd2lyZQ==', 1234, 'pending', null, null)`,
    `('00000000-0000-4000-8000-00000000000b', '${USER}', 'production', 'mainnet-beta', 'token', 'From1', 'To2', 'MintUSDC',
      1500000, 6, 2044280, null, null, 'sigB', 'd2lyZQ==', 99, 'failed', 'Expired', null)`,
    `('00000000-0000-4000-8000-00000000000c', '${USER}', 'sandbox', 'devnet', 'swap', 'From1', 'From1', 'MintUSDC',
      5000000, 6, 0, 'MintUSDT', 4900000, 'sigC', 'd2lyZQ==', 0, 'confirmed', null, '${QUOTE}')`,
  ];
  const seed = [
    `insert into users (id, email) values ('${USER}', 'chain-sends@example.test')`,
    `insert into solana_transfers (id, user_id, environment, network, kind, from_address, to_address, mint, amount_raw,
       decimals, fee_lamports, output_mint, output_amount_raw, signature, wire, last_valid_block_height, status, error,
       quote_id)
     values ${rows.join(', ')}`,
  ];
  const read = `select id, user_id, environment::text, family, network, kind::text, from_address, to_address, asset,
      amount_raw::text, decimals, fee_raw::text, output_asset, output_amount_raw::text, tx_hash, wire,
      valid_through_height::text, nonce, block, confirmations, replaces, status::text, error, quote_id
    from chain_sends order by id`;
  const gone = `select
      (select count(*)::int from pg_class where relname = 'solana_transfers') as tables,
      (select count(*)::int from pg_type where typname in ('solana_transfer_kind', 'solana_transfer_status')) as types`;

  const expected = [
    {
      id: '00000000-0000-4000-8000-00000000000a',
      user_id: USER,
      environment: 'sandbox',
      family: 'solana',
      network: 'devnet',
      kind: 'native',
      from_address: 'From1',
      to_address: 'To1',
      asset: null,
      amount_raw: '100000000',
      decimals: 9,
      fee_raw: '5000',
      output_asset: null,
      output_amount_raw: null,
      tx_hash: 'sigA',
      wire: 'd2lyZQ==',
      valid_through_height: '1234',
      nonce: null,
      block: null,
      confirmations: 0,
      replaces: null,
      status: 'pending',
      error: null,
      quote_id: null,
    },
    {
      id: '00000000-0000-4000-8000-00000000000b',
      environment: 'production',
      network: 'mainnet-beta',
      kind: 'token',
      asset: 'MintUSDC',
      amount_raw: '1500000',
      fee_raw: '2044280',
      tx_hash: 'sigB',
      valid_through_height: '99',
      status: 'failed',
      error: 'Expired',
    },
    {
      id: '00000000-0000-4000-8000-00000000000c',
      kind: 'swap',
      asset: 'MintUSDC',
      output_asset: 'MintUSDT',
      output_amount_raw: '4900000',
      tx_hash: 'sigC',
      status: 'confirmed',
      quote_id: QUOTE,
    },
  ];

  it('moves every row, its status and its hold, and drops the old table and types', async () => {
    const folder = before();
    let moved: Record<string, unknown>[];
    let left: Record<string, unknown>;
    if (onPostgres) {
      const pool = new pg.Pool({ connectionString: await isolatedTestDatabaseUrl({ migrated: false }), max: 2 });
      try {
        await migratePostgres(pool, { folder });
        for (const statement of seed) await pool.query(statement);
        await migratePostgres(pool);
        moved = (await pool.query(read)).rows;
        left = (await pool.query(gone)).rows[0];
      } finally {
        await pool.end();
      }
    } else {
      const [{ createPglite }, { drizzle }, { migrate }] = await Promise.all([
        import('../../src/db/pglite-engine.js'),
        import('drizzle-orm/pglite'),
        import('drizzle-orm/pglite/migrator'),
      ]);
      const client = await createPglite('memory://');
      try {
        await migrate(drizzle(client), { migrationsFolder: folder });
        for (const statement of seed) await client.exec(statement);
        await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER });
        moved = (await client.query<Record<string, unknown>>(read)).rows;
        left = (await client.query<Record<string, unknown>>(gone)).rows[0]!;
      } finally {
        await client.close();
      }
    }
    expect(moved).toHaveLength(3);
    expect(moved[0]).toEqual(expected[0]);
    expected.slice(1).forEach((row, i) => expect(moved[i + 1]).toMatchObject(row));
    // What the pending send holds, as the send path counts it, is what it held before.
    const pending = moved.filter((r) => r['status'] === 'pending' && r['family'] === 'solana');
    expect(pending.map((r) => BigInt(r['amount_raw'] as string) + BigInt(r['fee_raw'] as string))).toEqual([
      100_005_000n,
    ]);
    expect(left).toEqual({ tables: 0, types: 0 });
  });
});
