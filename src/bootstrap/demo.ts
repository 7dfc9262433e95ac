import type { Services } from '../services.js';

export const DEMO_EMAIL = 'demo@partner-gateway.local';
export const DEMO_KEY_NAME = 'Demo sandbox key';

/**
 * On a database with no users, creates the demo user and business, so a first `npm start` can be
 * tried at once. Its key is not made here but by issueDemoKey, once the server listens: a start
 * that fails after this point (the port taken, say) leaves no key that was never shown.
 */
export async function seedDemoUser(services: Services): Promise<void> {
  if (await services.users.hasAnyUser()) return;
  const user = await services.users.createUser({
    email: DEMO_EMAIL,
    firstName: 'Demo',
    lastName: 'User',
    verified: true,
  });
  await services.users.createBusiness(user.id, 'Demo Business');
}

/**
 * Called when the server listens: the demo user's Full Access sandbox key, made now to be printed
 * at once (only its hash is kept). Undefined when there is no demo user, or it has had its key:
 * the key's row is the record that it was shown, so every start until the first that listens
 * makes none, and that one prints it. A key made by a start before this rule, which failed before
 * printing it, is not known to be unshown: the README says how to make another.
 */
export async function issueDemoKey(services: Services): Promise<string | undefined> {
  const user = await services.users.userByEmail(DEMO_EMAIL);
  if (!user) return undefined;
  const keys = await services.apiKeys.list(user.id);
  if (keys.some((k) => k.name === DEMO_KEY_NAME)) return undefined;
  const { key } = await services.apiKeys.create({
    userId: user.id,
    name: DEMO_KEY_NAME,
    environment: 'sandbox',
    permission: 'FULL_ACCESS',
  });
  return key;
}
