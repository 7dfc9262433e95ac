import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from '../../src/domain/auth/principal.js';
import { abilitiesOf } from '../../src/domain/auth/permissions.js';
import { tokenBySymbol } from '../../src/domain/solana/sandbox-world.js';
import type { Services } from '../../src/services.js';
import { graphql, type Tenant, type TestApp } from '../helpers/app.js';
import { rest } from '../helpers/rest.js';
import { fund } from '../helpers/wallet.js';

export const USDC = tokenBySymbol('USDC')!.address;
export const USDT = tokenBySymbol('USDT')!.address;

/** A principal acting for the tenant in sandbox, for seeding through services directly. */
export const principalOf = (tenant: Tenant): Principal => ({
  kind: 'api_key',
  credentialId: `seed-${tenant.user.id}`,
  userId: tenant.user.id,
  environment: 'sandbox',
  abilities: abilitiesOf('FULL_ACCESS'),
});

async function ok(t: TestApp, tenant: Tenant, query: string) {
  const { body } = await graphql(t.app, tenant.keys.FULL_ACCESS, query);
  if (body.errors) throw new Error(`${query}: ${JSON.stringify(body.errors)}`);
  return body.data!;
}

/**
 * One money movement of every kind, oldest first: a deposit (virtual account), a bill, a payout,
 * a transfer to `other`, a swap and an offramp order.
 */
export async function seedEveryKind(t: TestApp, tenant: Tenant, other: Tenant, tag: string) {
  await fund(t, tenant, 5000);
  const bill = await rest(t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/bills/buy-airtime', {
    phoneNumber: '08031234567',
    biller: 'mtn',
    amount: 200,
    reference: `AIR-${tag}`,
  });
  if (bill.statusCode !== 201) throw new Error(bill.body);
  const payout = await rest(t, tenant.keys.TRANSACTIONS)('POST', '/api/v1/wallet/withdraw', {
    amount: 300,
    bankCode: '044',
    accountNumber: '0690000040',
    reference: `PO-${tag}`,
  });
  if (payout.statusCode !== 201) throw new Error(payout.body);
  await ok(
    t,
    tenant,
    `mutation { transfer(input: { amount: 25, recipient: "${other.user.email}", reference: "TR-${tag}" }) { id } }`,
  );
  await ok(t, tenant, 'mutation { sandboxSolanaFaucet { address } }');
  const quote = await ok(
    t,
    tenant,
    `{ swapQuote(input: { inputMint: "${USDC}", outputMint: "${USDT}", amount: "2" }) { quoteId } }`,
  );
  await ok(t, tenant, `mutation { swapTokens(input: { quoteId: "${quote.swapQuote.quoteId}" }) { signature } }`);
  await ok(
    t,
    tenant,
    `mutation { initiateOfframpOrder(input: { token: USDC, network: base, amount: "12", fiat: NGN, reference: "OFF-${tag}",
      recipient: { institution: "ABNGNGLA", accountNumber: "0011223344", accountName: "Ngozi Eze" } }) { id } }`,
  );
  return { quoteId: quote.swapQuote.quoteId as string };
}

/** Counts the SQL statements the database client runs while `work` runs (both drivers send each through `query`). */
export async function countStatements<T>(
  services: Services,
  work: () => Promise<T>,
): Promise<{ statements: number; result: T }> {
  const client = (services.db as unknown as { $client: { query: (...args: unknown[]) => unknown } }).$client;
  const original = client.query;
  let statements = 0;
  // Only the work's own statements: the app's background checks (readiness, every second) share
  // the client, and land in the window when a loaded machine makes the work slow.
  const inWork = new AsyncLocalStorage<true>();
  client.query = function (this: unknown, ...args: unknown[]) {
    if (!inWork.getStore()) return original.apply(this, args);
    statements += 1;
    if (process.env.SHOW_STATEMENTS) console.log(String(args[0]).slice(0, 160));
    return original.apply(this, args);
  };
  try {
    const result = await inWork.run(true, work);
    return { statements, result };
  } finally {
    client.query = original;
  }
}
