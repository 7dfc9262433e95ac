import type { Services } from '../services.js';

export const DEMO_EMAIL = 'demo@partner-gateway.local';

/**
 * On a database with no users, creates a demo user with a Full Access sandbox key so a first
 * `npm start` can be tried at once. Returns the key (shown once), or undefined when not needed.
 */
export async function seedDemoAccount(services: Services): Promise<string | undefined> {
  if (await services.users.hasAnyUser()) return undefined;
  const user = await services.users.createUser({
    email: DEMO_EMAIL,
    firstName: 'Demo',
    lastName: 'User',
    verified: true,
  });
  await services.users.createBusiness(user.id, 'Demo Business');
  const { key } = await services.apiKeys.create({
    userId: user.id,
    name: 'Demo sandbox key',
    environment: 'sandbox',
    permission: 'FULL_ACCESS',
  });
  return key;
}
