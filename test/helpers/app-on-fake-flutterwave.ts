import type { Config } from '../../src/config.js';
import { FakeFlutterwave } from '../fakes/flutterwave.js';
import { appOnFake } from './app-on-fake.js';

/**
 * Which of Flutterwave's APIs the app is pointed at: `bills` is v3 Bills alone (payments stay on
 * their default), `payments and bills` adds v4 payments and its token endpoint.
 */
export type FlutterwaveApis = 'bills' | 'payments and bills';

/** The configuration pointing the app's Flutterwave adapters at the fake, with its credentials. */
function flutterwaveConfig(flw: FakeFlutterwave, apis: FlutterwaveApis): Partial<Config> {
  const bills = {
    FLUTTERWAVE_V3_SECRET_KEY: flw.v3SecretKey,
    FLUTTERWAVE_V3_BASE_URL: `${flw.url}/v3`,
    FLUTTERWAVE_SECRET_HASH: flw.secretHash,
  };
  if (apis === 'bills') return bills;
  return {
    ...bills,
    FLUTTERWAVE_CLIENT_ID: flw.clientId,
    FLUTTERWAVE_CLIENT_SECRET: flw.clientSecret,
    FLUTTERWAVE_ENCRYPTION_KEY: flw.encryptionKey,
    FLUTTERWAVE_BASE_URL: `${flw.url}/v4`,
    FLUTTERWAVE_TOKEN_URL: `${flw.url}/token`,
  };
}

/**
 * For the enclosing describe block, production calls through the Flutterwave adapters: a fake
 * Flutterwave (`flw`) and an app on a database of its own configured against it, with a rate limit
 * no test reaches (see appOnFake).
 */
export function appOnFakeFlutterwave({ apis, listen }: { apis: FlutterwaveApis; listen?: boolean }) {
  return appOnFake('flw', FakeFlutterwave, { listen }, (flw) => ({
    RATE_LIMIT_PER_MINUTE: 100_000,
    ...flutterwaveConfig(flw, apis),
  }));
}
