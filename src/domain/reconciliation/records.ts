/**
 * What reconciliation compares: one money movement as one side records it. Provider adapters list
 * theirs (`ProviderRecord`), the gateway's stores list ours; both speak minor units (kobo, or a
 * token's base units) and three statuses, so one matcher serves every provider.
 */

export type RecordStatus = 'succeeded' | 'pending' | 'failed';

export interface ProviderRecord {
  /** The reference the gateway sent with the movement (Flutterwave tx_ref, a transfer's reference, a signature). */
  reference: string;
  /** The provider's own id for it (a transaction id, an order id); may equal `reference`. */
  providerRef: string;
  /** Minor units; null when the provider's list does not say (a chain's signature list). */
  amount: bigint | null;
  currency: string;
  status: RecordStatus;
  at: Date;
}

/** A day (or any span) of records to list: `from` inclusive, `to` exclusive. */
export interface ListWindow {
  from: Date;
  to: Date;
}

/** Provider statuses vary by API and version; anything not clearly final is still pending. */
export function recordStatusOf(status: string | undefined | null): RecordStatus {
  const s = (status ?? '').toLowerCase();
  if (['succeeded', 'successful', 'success', 'completed', 'settled', 'validated', 'confirmed'].includes(s))
    return 'succeeded';
  if (['failed', 'cancelled', 'reversed', 'voided', 'declined', 'refunded', 'expired'].includes(s)) return 'failed';
  return 'pending';
}

/**
 * A decimal amount in major units as providers send it (500, "500.0000", 12.5) in minor units,
 * without passing through a float: "12.345" with two decimals is refused rather than rounded.
 * Not money/decimal.ts's parseUnits: that reads a caller's input (a 400 on a field) and refuses the
 * trailing zeros providers pad their amounts with.
 */
export function minorUnitsOf(value: unknown, decimals = 2): bigint {
  const text = String(value ?? '').trim();
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) throw new RangeError(`Not an amount: ${JSON.stringify(value)}`);
  const fraction = (match[3] ?? '').replace(/0+$/, '');
  if (fraction.length > decimals) throw new RangeError(`More than ${decimals} decimals: ${text}`);
  const units = BigInt(match[2]! + fraction.padEnd(decimals, '0'));
  return match[1] ? -units : units;
}

/** An offramp order's gateway status as reconciliation compares it: fiat delivered is done. */
export function offrampRecordStatus(status: string | undefined): RecordStatus {
  if (status === 'completed' || status === 'fiat_sent') return 'succeeded';
  if (status === 'failed' || status === 'expired' || status === 'refunded') return 'failed';
  return 'pending';
}
