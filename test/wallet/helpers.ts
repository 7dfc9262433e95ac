import { stampCommittedEvents } from '../../src/domain/events/relay.js';
import { graphql, type Tenant, type TestApp } from '../helpers/app.js';
import { waitUntil } from '../helpers/wait.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** REST calls with one key: `call(method, url, body?, headers?)` → the injected response. */
export const rest =
  (t: TestApp, key: string) =>
  (method: Method, url: string, body?: object, headers: Record<string, string> = {}) =>
    t.app.inject({ method, url, headers: { 'x-api-key': key, ...headers }, ...(body ? { payload: body } : {}) });

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

/** The tenant's event kinds with a prefix, in commit order, once at least `count` are stamped. */
export async function eventsOf(
  t: TestApp,
  tenant: Tenant,
  prefix: string,
  count: number,
): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
  let events: Array<{ type: string; data: Record<string, unknown> }> = [];
  await waitUntil(async () => {
    await stampCommittedEvents(t.services.db, { wait: true });
    const { body } = await graphql(t.app, tenant.keys.READ_ONLY, '{ events(first: 200) { events { type data } } }');
    events = body.data!.events.events.filter((e: { type: string }) => e.type.startsWith(prefix));
    return events.length >= count;
  }, 10_000);
  return events;
}
