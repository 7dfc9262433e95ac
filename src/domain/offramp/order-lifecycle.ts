import { offrampOrders } from '../../db/offramp-schema.js';
import type { MoneyEventKind, OfframpEventData } from '../events/payloads.js';
import type { Lifecycle, Moves, RowOf } from '../lifecycle/lifecycle.js';
import { formatUnits } from '../money/decimal.js';
import { canMove, EVENT_OF_STATUS, OFFRAMP_STATUSES, type OfframpStatus } from './catalogue.js';

/** An order's event `data`: the crypto amount as decimal text, the fiat amount as a number (two decimals for every fiat). */
export const offrampEventData = (row: typeof offrampOrders.$inferSelect): OfframpEventData => ({
  reference: row.reference,
  status: row.status,
  amount: formatUnits(row.amountRaw, row.decimals),
  token: row.token,
  network: row.network,
  fiatAmount: Number(formatUnits(row.fiatAmountMinor, 2)),
  fiatCurrency: row.fiat,
  bankName: row.bankName,
  accountNumber: row.accountNumber,
});

/** Forward only along the happy path, or to a failure from any open state (catalogue.ts `canMove`). */
export const OFFRAMP_ORDER: Lifecycle<RowOf<typeof offrampOrders>> = {
  kind: 'offramp_order',
  table: offrampOrders,
  versioned: true,
  data: offrampEventData,
  moves: Object.fromEntries(
    OFFRAMP_STATUSES.map((from) => [
      from,
      Object.fromEntries(
        OFFRAMP_STATUSES.filter((to) => canMove(from, to)).map((to) => [to, [EVENT_OF_STATUS[to] as MoneyEventKind]]),
      ),
    ]),
  ) as unknown as Moves<OfframpStatus>,
};
