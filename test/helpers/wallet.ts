import { ledger, systemAccount, walletOf } from '../../src/domain/ledger/ledger.js';
import type { Services } from '../../src/services.js';
import { seedTenant, type Tenant, type TestApp } from './app.js';
import { rest } from './rest.js';

/** Funds a sandbox wallet through the permanent virtual account (an instant completed deposit). */
export async function fund(t: TestApp, tenant: Tenant, naira: number): Promise<void> {
  const response = await rest(t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/wallet/sandbox/virtual-account/transfer', {
    amount: naira,
  });
  if (response.statusCode !== 201) throw new Error(`funding failed: ${response.body}`);
}

export async function balanceOf(
  t: TestApp,
  tenant: Tenant,
): Promise<{ available: number; held: number; availableKobo: number; heldKobo: number }> {
  return (await rest(t, tenant.keys.READ_ONLY)('GET', '/api/v1/wallet/balance')).json().data;
}

/**
 * A new tenant whose production wallet holds `naira`, posted straight to the ledger from the
 * provider clearing account (production has no sandbox transfer to fund it through).
 */
export async function seedTenantWithProductionFunds(services: Services, naira: bigint): Promise<Tenant> {
  const tenant = await seedTenant(services);
  await services.db.transaction((tx) =>
    ledger.post(tx, {
      environment: 'production',
      kind: 'test-funding',
      reference: crypto.randomUUID(),
      lines: [
        { account: systemAccount('production', 'provider_clearing'), amount: -naira * 100n },
        { account: walletOf('production', tenant.user.id), amount: naira * 100n },
      ],
    }),
  );
  return tenant;
}

/** Stores a card (expiring 09/2032) as a production payment method of the tenant, and returns it. */
export async function storedProductionCard(
  t: TestApp,
  tenant: Tenant,
  card: { number: string; cvv: string },
): Promise<{ id: string }> {
  const response = await rest(t, tenant.productionKey)('POST', '/api/v1/payment-methods', {
    type: 'card',
    card: { number: card.number, expMonth: 9, expYear: 2032, cvv: card.cvv },
  });
  return response.json().data;
}
