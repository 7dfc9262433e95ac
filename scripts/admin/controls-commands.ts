import { controlsFromText, type KeyControlsText } from '../../src/domain/auth/key-controls-input.js';
import type { KeyControls } from '../../src/domain/auth/key-controls.js';
import { notFound } from '../../src/domain/errors.js';
import { nairaText } from '../../src/domain/wallet/naira.js';
import type { Services } from '../../src/services.js';

type Output = { json: unknown; text: string };

/** One key's own controls for a person: unset values fall back to the configured defaults. */
export function describeKeyControls(keyId: string, c: KeyControls): string {
  const naira = (v: bigint | null) => (v === null ? 'default' : v === 0n ? 'no limit' : `₦${nairaText(v)}`);
  const count = (v: number | null) => (v === null ? 'default' : v === 0 ? 'no limit' : String(v));
  return [
    `Key ${keyId}`,
    `  per payout:           ${naira(c.maxPayoutKobo)}`,
    `  total per 24 hours:   ${naira(c.maxDailyKobo)}`,
    `  payouts per 24 hours: ${count(c.maxDailyCount)}`,
    `  payouts per hour:     ${count(c.maxHourlyCount)}`,
    `  IP allow-list:        ${c.ipAllowList.length ? c.ipAllowList.join(', ') : 'none (any address)'}`,
  ].join('\n');
}

const asJson = (c: KeyControls) => ({
  maxPayoutKobo: c.maxPayoutKobo?.toString() ?? null,
  maxDailyKobo: c.maxDailyKobo?.toString() ?? null,
  maxDailyCount: c.maxDailyCount,
  maxHourlyCount: c.maxHourlyCount,
  ipAllowList: c.ipAllowList,
});

/**
 * `key-controls --user --key [--max-payout <naira>] [--max-daily <naira>] [--max-daily-count N]
 * [--max-hourly-count N] [--ip-allow-list "cidr,…"]`: shows a key's controls, or changes the ones
 * given (blank or `default`: the configured default; 0: no limit; an empty list: none).
 */
export async function keyControlsCommand(
  services: Services,
  userId: string,
  keyId: string,
  text: KeyControlsText,
): Promise<Output> {
  const owned = (await services.apiKeys.list(userId)).some((k) => k.id === keyId);
  if (!owned) throw notFound('API key');
  const changing = Object.values(text).some((v) => v !== undefined);
  // Merged with the stored controls under the save's lock (KeyControlsService.update).
  const controls = changing
    ? await services.keyControls.update(userId, keyId, (current) => controlsFromText(text, current))
    : await services.keyControls.of(services.db, keyId);
  return { json: asJson(controls), text: describeKeyControls(keyId, controls) };
}
