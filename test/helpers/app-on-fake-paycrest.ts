import type { Clock } from '../../src/domain/clock.js';
import { FakePaycrest } from '../fakes/paycrest.js';
import { appOnFake } from './app-on-fake.js';

/**
 * For the enclosing describe block, production offramp through the Paycrest adapter: a fake
 * Paycrest (`paycrest`) and an app on a database of its own configured against it with the fake's
 * credentials (see appOnFake).
 */
export function appOnFakePaycrest(options: { clock: Clock; listen?: boolean }) {
  return appOnFake('paycrest', FakePaycrest, options, (paycrest) => ({
    PAYCREST_API_KEY: paycrest.apiKey,
    PAYCREST_API_SECRET: paycrest.apiSecret,
    PAYCREST_BASE_URL: paycrest.url,
  }));
}

/** An offramp order body the fake accepts: 50 USDT on Ethereum paid out in NGN to a GTBank account. */
export const usdtToNgnOrder = (reference: string) => ({
  token: 'USDT',
  network: 'ethereum',
  amount: 50,
  fiat: 'NGN',
  reference,
  recipient: { institution: 'GTBINGLA', accountNumber: '0123456789', accountName: 'Chidi Okafor' },
});
