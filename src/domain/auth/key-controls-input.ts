import { badInput } from '../errors.js';
import { parseAllowListOver } from './ip-allow-list.js';
import type { KeyControls } from './key-controls.js';

/** Controls as typed by a person (dashboard form, admin CLI): naira amounts, counts, a list of CIDRs. */
export interface KeyControlsText {
  maxPayout?: string | undefined;
  maxDaily?: string | undefined;
  maxDailyCount?: string | undefined;
  maxHourlyCount?: string | undefined;
  ipAllowList?: string | undefined;
}

// Commas only as thousands separators: "1,50" is a typo (or a decimal comma), not ₦150.
const NAIRA = /^(\d{1,12}|\d{1,3}(,\d{3}){1,3})(\.\d{1,2})?$/;
const COUNT = /^\d{1,9}$/;

/**
 * Reads typed controls over the current ones: a field left out keeps its value; blank or
 * `default` means the configured default; `0` means no limit. Names the field at fault. An
 * allow-list typed as it is stored is kept as stored, even one today's bounds would refuse.
 */
export function controlsFromText(text: KeyControlsText, current: KeyControls): KeyControls {
  return {
    maxPayoutKobo: amount(text.maxPayout, 'maxPayout', current.maxPayoutKobo),
    maxDailyKobo: amount(text.maxDaily, 'maxDaily', current.maxDailyKobo),
    maxDailyCount: count(text.maxDailyCount, 'maxDailyCount', current.maxDailyCount),
    maxHourlyCount: count(text.maxHourlyCount, 'maxHourlyCount', current.maxHourlyCount),
    ipAllowList:
      text.ipAllowList === undefined ? current.ipAllowList : parseAllowListOver(text.ipAllowList, current.ipAllowList),
  };
}

function amount(value: string | undefined, field: string, current: bigint | null): bigint | null {
  if (value === undefined) return current;
  const typed = value.trim();
  if (typed === '' || typed === 'default') return null;
  if (!NAIRA.test(typed))
    throw badInput(
      field,
      `${field} must be an amount in naira (up to 2 decimals), 0 for no limit, or blank for the default.`,
    );
  const [whole, fraction = ''] = typed.replace(/,/g, '').split('.');
  return BigInt(whole!) * 100n + BigInt(fraction.padEnd(2, '0'));
}

function count(value: string | undefined, field: string, current: number | null): number | null {
  if (value === undefined) return current;
  const v = value.trim();
  if (v === '' || v === 'default') return null;
  if (!COUNT.test(v))
    throw badInput(field, `${field} must be a whole number, 0 for no limit, or blank for the default.`);
  return Number(v);
}
