import { Keypair } from '@solana/web3.js';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import type { Principal } from '../../src/domain/auth/principal.js';
import { type RelayLoop, startRelay } from '../../src/domain/events/relay.js';
import type { Services } from '../../src/services.js';
import { createTestServices, sandboxPrincipal } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * A Solana send writes its events through its own statements (the record, the lifecycle's move),
 * not through recordEvent: they must wake the relay as recordEvent does, or its events wait for
 * the relay's idle poll (100 ms by default: half of every sandbox transfer's stamping lag).
 */
describe('a Solana send wakes the event relay', () => {
  let services: Services;
  let alice: Principal;
  let relay: RelayLoop | undefined;
  beforeAll(async () => {
    services = await createTestServices();
    alice = await sandboxPrincipal(services);
    await services.sandboxFaucet.fund(alice, { network: 'devnet' });
  });
  afterAll(async () => {
    await relay?.stop();
  });

  it('has its created and completed events stamped at once, not at the idle poll', async () => {
    // An idle poll of a minute: only a hint gets the events stamped within the wait below. The
    // loop's first round runs at start and stamps what the setup recorded (its hints went to no
    // loop: none was running).
    relay = startRelay(services.db, { idleMs: 60_000 });
    const sent = await services.solanaTransfers.transferSol(
      alice,
      { to: Keypair.generate().publicKey.toBase58(), amount: '0.01', network: 'devnet' },
      undefined,
    );
    expect(sent.status).toBe('confirmed');
    const stamped = async () =>
      queryRows<{ type: string; seq: unknown }>(
        services.db,
        sql`select type, seq from events where data->>'signature' = ${sent.signature} order by created_at, type`,
      );
    await waitUntil(async () => {
      const rows = await stamped();
      return rows.length === 2 && rows.every((e) => e.seq !== null);
    }, 10_000);
    expect((await stamped()).map((e) => e.type).sort()).toEqual(['transaction.completed', 'transaction.created']);
  });
});
