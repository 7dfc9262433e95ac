import { randomUUID } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { hashSecret } from '../../src/domain/accounts/secrets-hashing.js';
import type { RegisterClientInput } from '../../src/domain/connect/client-registry.js';
import type { Services } from '../../src/services.js';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

/** A verified user signed in to the dashboard: the cookie a browser would hold. */
export async function signedInUser(services: Services) {
  const email = `c-${randomUUID()}@example.test`;
  const user = await services.users.createUser({
    email,
    firstName: 'Chidi',
    lastName: 'Okafor',
    verified: true,
    passwordHash: await hashSecret('correct horse battery'),
  });
  const { token } = await services.accounts.signIn(email, 'correct horse battery');
  return { user, cookie: `pgw_session=${token}` };
}

export async function registerApp(services: Services, ownerUserId: string, input: Partial<RegisterClientInput> = {}) {
  return services.oauthClients.register(ownerUserId, {
    name: 'Budget Buddy',
    environment: 'sandbox',
    clientType: 'confidential',
    redirectUris: [REDIRECT_URI],
    allowedScopes: ['read', 'transact', 'manage'],
    ...input,
  });
}

/** The authorization server as oauth4webapi sees it. */
export function authorizationServerOf(baseUrl: string, issuer: string): oauth.AuthorizationServer {
  return {
    issuer,
    authorization_endpoint: `${baseUrl}/connect/authorize`,
    token_endpoint: `${baseUrl}/connect/token`,
    revocation_endpoint: `${baseUrl}/connect/revoke`,
    authorization_response_iss_parameter_supported: true,
  };
}

export const insecure = { [oauth.allowInsecureRequests]: true };

/** A person's browser on the consent page: loads it with their cookie, then approves or denies. */
export async function consent(
  baseUrl: string,
  cookie: string,
  params: Record<string, string>,
  decision: 'approve' | 'deny' = 'approve',
  beforeSubmit?: () => void | Promise<void>,
  /** Another session's cookie to submit the form with (the page is loaded with `cookie`). */
  submitCookie = cookie,
) {
  const url = `${baseUrl}/connect/authorize?${new URLSearchParams(params)}`;
  const shown = await fetch(url, { headers: { cookie, accept: 'text/html' }, redirect: 'manual' });
  const page = await shown.text();
  if (shown.status !== 200) return { status: shown.status, location: shown.headers.get('location'), page };
  const csrfCookie = shown.headers
    .getSetCookie()
    .find((c) => c.startsWith('_csrf='))!
    .split(';')[0]!;
  const form = new URLSearchParams({
    _csrf: page.match(/name="_csrf" value="([^"]+)"/)![1]!,
    consent: page.match(/name="consent" value="([^"]+)"/)![1]!,
    client_id: params.client_id ?? '',
    decision,
  });
  await beforeSubmit?.();
  const answered = await fetch(`${baseUrl}/connect/authorize`, {
    method: 'POST',
    headers: {
      cookie: `${submitCookie}; ${csrfCookie}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'text/html',
    },
    body: form,
    redirect: 'manual',
  });
  return { status: answered.status, location: answered.headers.get('location'), page: await answered.text() };
}

/**
 * A protected-resource call a strict client must refuse with a challenge (RFC 6750 §3), read by
 * oauth4webapi: the refusal, or undefined when the library saw no challenge.
 */
export async function challengeOf(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: object,
): Promise<oauth.WWWAuthenticateChallengeError | undefined> {
  const headers = new Headers(body ? { 'content-type': 'application/json' } : {});
  const thrown = await oauth
    .protectedResourceRequest(token, method, new URL(path, base), headers, body ? JSON.stringify(body) : null, insecure)
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  return thrown instanceof oauth.WWWAuthenticateChallengeError ? thrown : undefined;
}
