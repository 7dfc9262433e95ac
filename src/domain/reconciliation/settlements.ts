import { and, eq, inArray, or } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { deposits } from '../../db/wallet-schema.js';
import type { Environment } from '../auth/permissions.js';
import type { Settlement } from '../payments/payments-provider.js';
import type { OurRecord } from './matcher.js';
import { ourDepositRecord } from './our-records.js';
import type { ProviderRecord } from './records.js';
import type { SourceItems } from './sources.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Settlements against collections, as two items. `settlement`: every collection a settlement paid
 * on against the gateway's deposits — one the gateway does not know is `missing_ours`; a completed
 * deposit of the day in no settlement is `missing_theirs` (unsettled), but only once the provider's
 * settlement window after the day has passed (before, it is simply not settled yet). Its clearing is
 * settled minus collected, so a day nets to zero once everything it collected is settled.
 * `settlement_net`: each settlement's net amount against its transactions less their fees and the
 * batch's deductions (`amount_differs`). A settled collection is dated by its deposit when the
 * gateway knows it, else by its settlement, so each break falls on one day.
 */
export async function settlementItems(
  db: Executor,
  environment: Environment,
  provider: string,
  dayDeposits: OurRecord[],
  settlements: Settlement[],
  due: boolean,
): Promise<SourceItems[]> {
  const settled = settlements.flatMap((s) => s.transactions);
  const known = await depositsNamed(db, environment, provider, settled);
  const ours = new Map<string, OurRecord>();
  for (const d of [...known, ...dayDeposits]) ours.set(d.reference, d);
  const byRef = new Map<string, OurRecord>();
  for (const d of ours.values()) {
    byRef.set(d.reference, d);
    if (d.providerRef) byRef.set(d.providerRef, d);
  }
  const theirs: ProviderRecord[] = settled.map(({ fee: _fee, ...t }) => {
    const our = byRef.get(t.reference) ?? byRef.get(t.providerRef);
    return { ...t, at: our?.at ?? t.at };
  });
  const seen = new Set(theirs.flatMap((t) => [t.reference, t.providerRef]));
  // Before the window has passed, a collection in no settlement is not yet a question.
  const compared = [...ours.values()].filter(
    (d) => due || seen.has(d.reference) || (d.providerRef !== null && seen.has(d.providerRef)),
  );
  const net = (s: Settlement) => ({
    reference: `settlement-${s.id}`,
    providerRef: s.id,
    currency: s.currency,
    status: s.status,
    at: s.createdAt,
  });
  return [
    { itemType: 'settlement', direction: 'in', clearing: true, ours: compared, theirs },
    {
      itemType: 'settlement_net',
      direction: 'in',
      clearing: false,
      compare: 'balances',
      breakKind: 'amount_differs',
      ours: settlements.map((s) => ({
        ...net(s),
        itemType: 'settlement_net',
        providerRef: s.id,
        amount: s.transactions.reduce((sum, t) => sum + t.amount - t.fee, 0n) - s.deductions,
      })),
      theirs: settlements.map((s) => ({ ...net(s), amount: s.netAmount })),
    },
  ];
}

/** The gateway's deposits a settlement names, whatever their day: by `pgw-<id>` or the provider's id. */
async function depositsNamed(
  db: Executor,
  environment: Environment,
  provider: string,
  settled: ProviderRecord[],
): Promise<OurRecord[]> {
  if (settled.length === 0) return [];
  const ids = settled.map((t) => t.reference.replace(/^pgw-/, '')).filter((id) => UUID.test(id));
  const refs = [...new Set(settled.flatMap((t) => [t.reference, t.providerRef]))];
  const rows = await db
    .select()
    .from(deposits)
    .where(
      and(
        eq(deposits.environment, environment),
        eq(deposits.provider, provider),
        ids.length > 0
          ? or(inArray(deposits.id, ids), inArray(deposits.providerRef, refs))
          : inArray(deposits.providerRef, refs),
      ),
    );
  return rows.map(ourDepositRecord);
}
