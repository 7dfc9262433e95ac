import { getBase58Decoder } from '@solana/kit';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { eq, sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetHolds } from '../../src/domain/assets/asset-holds.js';
import { chainSends } from '../../src/db/chain-schema.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { laneOf } from '../../src/domain/jobs/lanes.js';
import type { SolanaWalletRow } from '../../src/domain/solana/custodial-wallets.js';
import { SOL_MINT } from '../../src/domain/solana/native-token.js';
import { OTHER_SCALE_MAX_AGE_MS, SIGNATURE_FEE } from '../../src/domain/solana/transfer-service.js';
import { CONFIRM_JOB, SOLANA } from '../../src/domain/solana/transfer-store.js';
import type { Services } from '../../src/services.js';
import { createTestServices, sandboxPrincipal } from '../helpers/app.js';
import { onPostgres, testDatabaseUrl } from '../helpers/database.js';
import { storePendingSolSend } from '../helpers/solana-sends.js';
import { waitUntil } from '../helpers/wait.js';

const SOL = 1_000_000_000n;
const AMOUNT = SOL / 10n;

/**
 * A send the confirmation job is failing (its blockhash expired by the job's reckoning) while a
 * re-broadcast of it lands on the sandbox chain. Both take the send's row and its holds: in one
 * order, the later waits for the earlier; in opposite orders, each holds what the other waits for.
 * The job is stopped between its two locks by a row lock held from another connection (the send's
 * confirmation job row, which the job's move drops in the statement that moves the send), so the
 * chain's commit runs into it at that point every time.
 */
describe.skipIf(!onPostgres)('a sandbox send settled by its job while its re-broadcast lands (PostgreSQL)', () => {
  let services: Services;
  let alice: Principal;
  let wallet: SolanaWalletRow;
  let blocker: pg.Client;
  let watcher: pg.Client;

  beforeAll(async () => {
    services = await createTestServices();
    alice = await sandboxPrincipal(services);
    await services.sandboxFaucet.fund(alice, { network: 'devnet', asset: 'SOL', amount: '2' });
    wallet = await services.solanaWallets.walletOf(alice);
    blocker = new pg.Client({ connectionString: testDatabaseUrl() });
    // Outside the blocker's transaction, whose reads of pg_stat_activity would stay as they first were.
    watcher = new pg.Client({ connectionString: testDatabaseUrl() });
    await Promise.all([blocker.connect(), watcher.connect()]);
  });

  afterAll(async () => {
    await Promise.all([blocker?.end(), watcher?.end()]);
  });

  /** A pending send of AMOUNT with its holds, as the send path records it, signed with a blockhash the chain takes. */
  async function pendingSend() {
    const owner = new PublicKey(wallet.address);
    const to = Keypair.generate().publicKey;
    const blockhash = services.sandboxChains.blockhashes.latest('devnet').blockhash;
    const transaction = new Transaction({ feePayer: owner, blockhash, lastValidBlockHeight: 0 }).add(
      SystemProgram.transfer({ fromPubkey: owner, toPubkey: to, lamports: AMOUNT }),
    );
    transaction.addSignature(
      owner,
      Buffer.from(await services.solanaWallets.sign(wallet, transaction.serializeMessage())),
    );
    const wire = transaction.serialize({ verifySignatures: false });
    const signature = getBase58Decoder().decode(transaction.signatures[0]!.signature!);
    // Stored long enough ago, with a height on litesvm's earlier scale, that the job judges it expired.
    const createdAt = new Date(Date.now() - OTHER_SCALE_MAX_AGE_MS - 60_000);
    const row = await services.db.transaction(async (tx) => {
      const send = await storePendingSolSend(
        tx,
        { userId: alice.userId, from: wallet.address, to: to.toBase58(), amountRaw: AMOUNT, signature, wire },
        { validThroughHeight: 150n, createdAt },
      );

      const held = await assetHolds.place(
        tx,
        { environment: 'sandbox', userId: alice.userId, family: SOLANA, network: 'devnet', address: wallet.address },
        { id: send.id, txHash: signature },
        [{ asset: SOL_MINT, amount: AMOUNT + SIGNATURE_FEE, principal: AMOUNT }],
      );
      expect(held.placed).toBe(true);
      // Its confirmation job, due later (no runner takes it meanwhile).
      await tx.execute(
        sql`insert into jobs (id, kind, lane, tenant, payload, run_at)
          values (${send.id}::uuid, ${CONFIRM_JOB}, ${laneOf(CONFIRM_JOB)}, ${alice.userId},
            jsonb_build_object('transferId', ${send.id}::text), now() + interval '1 hour')`,
      );
      return send;
    });
    return { row, wire };
  }

  /** Statements of this database waiting on a lock, about chain sends. */
  const waiting = async () => {
    const { rows } = await watcher.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock' and query like '%chain_sends%'`,
    );
    return rows[0]!.n;
  };

  it('neither deadlocks: the job settles the send, then the chain’s commit finds it settled and posts what moved', async () => {
    const { row, wire } = await pendingSend();
    await blocker.query('begin');
    await blocker.query('select 1 from jobs where id = $1 for update', [row.id]);
    let settling: Promise<unknown> | undefined;
    let landing: Promise<unknown> | undefined;
    try {
      // The job: the send moved (its row locked), stopped before its holds.
      settling = services.solanaTransfers.confirm(row.id).then(
        (state) => ({ state }),
        (error: unknown) => ({ error }),
      );
      await waitUntil(async () => (await waiting()) === 1);
      // The re-broadcast lands: its commit takes what it takes until it waits on the job.
      landing = services.solanaChains
        .chainFor('sandbox', 'devnet')
        .sendTransaction(wire)
        .then(
          (signature) => ({ signature }),
          (error: unknown) => ({ error }),
        );
      await waitUntil(async () => (await waiting()) === 2);
    } finally {
      await blocker.query('commit');
    }
    const [settled, landed] = await Promise.all([settling!, landing!]);
    // No deadlock: each side finished, neither was chosen as the victim.
    expect({ settled, landed }).toEqual({ settled: { state: 'final' }, landed: { signature: expect.any(String) } });
    const [after] = await services.db.select().from(chainSends).where(eq(chainSends.id, row.id));
    expect(after!.status).toBe('failed');
    // Its holds were released once; what the chain moved was posted by the chain's commit.
    const holds = (await services.db.execute(
      sql`select status from asset_holds where send_id = ${row.id}::uuid`,
    )) as unknown as { rows: Array<{ status: string }> };
    expect(holds.rows).toEqual([{ status: 'released' }]);
    const chainPostings = (await services.db.execute(
      sql`select kind from asset_postings where reference = ${`devnet:${row.txHash}:${wallet.address}:${SOL_MINT}`}`,
    )) as unknown as { rows: Array<{ kind: string }> };
    expect(chainPostings.rows).toEqual([{ kind: 'chain' }]);
  });
});
