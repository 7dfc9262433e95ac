import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/client.js';
import {
  AssetOverdrawn,
  type AssetPlace,
  type AssetPosting,
  assetLedger,
  systemAccount,
  userAccount,
} from '../../src/domain/assets/asset-ledger.js';
import type { Services } from '../../src/services.js';
import { createTestServices, seedTenant } from '../helpers/app.js';

/**
 * The asset ledger's one pass (postAll): postings touching one account several times move it by
 * their sum, each entry carrying the running balance (credits before debits), a kind and reference
 * post once, and a debit below zero refuses the whole pass.
 */
describe('asset ledger postings', () => {
  let services: Services;
  let owner: { userId: string; address: string };
  let place: AssetPlace;
  let reference = 0;

  beforeAll(async () => {
    services = await createTestServices();
    owner = { userId: (await seedTenant(services)).user.id, address: '0x00000000000000000000000000000000000000a1' };
    place = { environment: 'sandbox', family: 'test', network: `net-${Date.now()}`, asset: 'COIN' };
  });

  const wallet = () => userAccount(place, owner, 'wallet');
  const holds = () => userAccount(place, owner, 'holds');
  const movement = (kind: string, amount: bigint, from = systemAccount(place, 'external'), to = wallet()) =>
    ({
      environment: 'sandbox',
      kind,
      reference: `r${++reference}`,
      lines: [
        { account: from, amount: -amount },
        { account: to, amount },
      ],
    }) satisfies AssetPosting;
  const balances = () => assetLedger.balances(services.db, place, owner.userId, [place.asset]);
  const entriesOf = (posting: AssetPosting) =>
    queryRows<{ amount: string; balance_after: string; key: string }>(
      services.db,
      sql`select e.amount::text as amount, e.balance_after::text as balance_after, a.key
          from asset_entries e join asset_postings p on p.id = e.posting_id join asset_accounts a on a.id = e.account_id
          where p.kind = ${posting.kind} and p.reference = ${posting.reference} and a.user_id is not null`,
    );

  it('moves an account touched by several postings by their sum, each entry with the running balance', async () => {
    const arrival = movement('observed', 100n);
    const hold = movement('hold', 70n, wallet(), holds());
    const second = movement('observed', 5n);
    const posted = await services.db.transaction((tx) => assetLedger.postAll(tx, [arrival, hold, second]));
    expect(posted).toEqual([true, true, true]);
    expect((await balances()).get(place.asset)).toMatchObject({ available: 35n, held: 70n });
    // Credits first (100, then 5), then the debit: 100, 105, 35 on the wallet.
    const walletKey = (await entriesOf(arrival)).find((e) => e.key.includes(':wallet:'))!.key;
    const onWallet = [...(await entriesOf(arrival)), ...(await entriesOf(second)), ...(await entriesOf(hold))].filter(
      (e) => e.key === walletKey,
    );
    expect(onWallet.map((e) => [e.amount, e.balance_after])).toEqual([
      ['100', '100'],
      ['5', '105'],
      ['-70', '35'],
    ]);
    expect((await entriesOf(hold)).find((e) => e.key.includes(':holds:'))).toMatchObject({
      amount: '70',
      balance_after: '70',
    });
    expect(await assetLedger.totalOf(services.db, place)).toBe(0n);
  });

  it('posts a kind and reference once: named again, or twice in one pass, nothing moves', async () => {
    const before = (await balances()).get(place.asset)!;
    const gift = movement('observed', 9n);
    expect(await services.db.transaction((tx) => assetLedger.postAll(tx, [gift, { ...gift }]))).toEqual([true, false]);
    expect(await services.db.transaction((tx) => assetLedger.postAll(tx, [gift]))).toEqual([false]);
    expect((await balances()).get(place.asset)!.available).toBe(before.available + 9n);
  });

  it('refuses a pass whose moves would take a wallet below zero, naming the account; no balance of it moves', async () => {
    const before = (await balances()).get(place.asset)!;
    const credit = movement('observed', 1n);
    const tooMuch = movement('hold', before.available + 2n, wallet(), holds());
    let seenInside: unknown;
    const refused = await services.db
      .transaction(async (tx) => {
        const outcome = await assetLedger.postAll(tx, [credit, tooMuch]).catch((error: unknown) => error);
        // All or none: within the transaction, before it rolls back, not even the credit moved.
        seenInside = (await assetLedger.balances(tx, place, owner.userId, [place.asset])).get(place.asset);
        throw outcome;
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AssetOverdrawn);
    expect(seenInside).toMatchObject({ available: before.available, held: before.held });
    const [account] = await queryRows<{ key: string }>(
      services.db,
      sql`select key from asset_accounts where id = ${(refused as AssetOverdrawn).accountId}::uuid`,
    );
    expect(account!.key).toContain(':wallet:');
    expect((await balances()).get(place.asset)).toMatchObject({ available: before.available, held: before.held });
    expect(await entriesOf(credit)).toEqual([]);
  });

  it('answers false for a posting with no movement, and an unbalanced one is an error', async () => {
    const nothing = movement('observed', 0n);
    expect(await services.db.transaction((tx) => assetLedger.postAll(tx, [nothing]))).toEqual([false]);
    const unbalanced = { ...movement('observed', 3n) };
    unbalanced.lines = [unbalanced.lines[0]!, { ...unbalanced.lines[1]!, amount: 4n }];
    await expect(services.db.transaction((tx) => assetLedger.postAll(tx, [unbalanced]))).rejects.toThrow(
      /Unbalanced asset posting/,
    );
  });
});
