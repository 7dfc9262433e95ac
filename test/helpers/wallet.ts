import type { Tenant, TestApp } from './app.js';
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
