import type { ManualClock } from '../../src/domain/clock.js';
import { FlutterwaveProvider } from '../../src/domain/payments/flutterwave-provider.js';
import { Reconciliation, type ReconciliationSettings } from '../../src/domain/reconciliation/reconciliation-service.js';
import type { ReconciliationSource } from '../../src/domain/reconciliation/sources.js';
import { FakeFlutterwave } from '../fakes/flutterwave.js';
import { createTestApp, seedTenant, type TestApp } from './app.js';

const HOUR_MS = 3_600_000;

/** The settings the reconciliation tests run with: a day to settle (Flutterwave 12 h), breaks kept open 72 h. */
export const RECONCILIATION_SETTINGS: ReconciliationSettings = {
  settlementHours: 24,
  settlementHoursByProvider: { flutterwave: 12 },
  breakMaxAgeMs: 72 * HOUR_MS,
};

/** A Flutterwave adapter talking to the fake (its credentials unless overridden). */
export function flutterwaveAgainst(
  fake: FakeFlutterwave,
  over: Partial<ConstructorParameters<typeof FlutterwaveProvider>[0]> = {},
): FlutterwaveProvider {
  return new FlutterwaveProvider({
    clientId: fake.clientId,
    clientSecret: fake.clientSecret,
    encryptionKey: fake.encryptionKey,
    baseUrl: `${fake.url}/v4`,
    tokenUrl: `${fake.url}/token`,
    v3SecretKey: fake.v3SecretKey,
    v3BaseUrl: `${fake.url}/v3`,
    ...over,
  });
}

export interface FlutterwaveReconciliation {
  t: TestApp;
  fake: FakeFlutterwave;
  recon: Reconciliation;
  /** A seeded user whose records the file writes. */
  userId: string;
  stop(): Promise<void>;
}

/**
 * An app on a database of its own (a run reads every record of the day), a fake Flutterwave
 * listing two rows a page (so lists take several pages), and a Reconciliation over the sources
 * built from it.
 */
export async function startFlutterwaveReconciliation(
  clock: ManualClock,
  sources: (flutterwave: FlutterwaveProvider, t: TestApp) => ReconciliationSource[],
  settings: ReconciliationSettings = RECONCILIATION_SETTINGS,
): Promise<FlutterwaveReconciliation> {
  const t = await createTestApp({ isolated: true, clock });
  const fake = await new FakeFlutterwave().start();
  fake.v3PageSize = 2;
  const recon = new Reconciliation(t.services.db, clock, sources(flutterwaveAgainst(fake), t), settings);
  const userId = (await seedTenant(t.services)).user.id;
  return {
    t,
    fake,
    recon,
    userId,
    stop: async () => {
      await fake.stop();
      await t.close();
    },
  };
}
