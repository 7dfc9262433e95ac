import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { badInput } from '../errors.js';
import { BlockedAddressError, type Lookup, lookupPublic, systemLookup } from './safe-http.js';

/** How long saving an endpoint waits for its host name to resolve before refusing it. */
export const RESOLVE_TIMEOUT_MS = 5_000;

export interface ResolutionOptions {
  lookup?: Lookup;
  timeoutMs?: number;
}

/**
 * Refuses a webhook URL whose host name resolves to a private, loopback, link-local or reserved
 * address (`localhost.`, a name from /etc/hosts such as the machine's own, an internal zone), with
 * the checks a delivery's connection makes (safe-http.ts), so the partner hears of it when saving
 * rather than through failed deliveries. Deliveries keep their own check: DNS can change after.
 * A name that does not resolve is refused too, with a message that says so. Literal addresses were
 * checked by validateWebhookUrl and are not looked up.
 */
export async function assertResolvesPublic(url: URL, options: ResolutionOptions = {}): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) return;
  const timeoutMs = options.timeoutMs ?? RESOLVE_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
    timer.unref();
  });
  const resolved = new Promise<Error | LookupAddress[]>((resolve) =>
    lookupPublic(options.lookup ?? systemLookup, host, (error, addresses) => resolve(error ?? addresses)),
  );
  const outcome = await Promise.race([resolved, timedOut]).finally(() => clearTimeout(timer));
  if (outcome === 'timeout')
    throw badInput('url', `url's host ${host} could not be resolved within ${timeoutMs / 1000} s; try again.`);
  if (outcome instanceof BlockedAddressError)
    throw badInput(
      'url',
      `url's host ${host} resolves to a private, loopback, link-local or reserved address; webhook URLs must be publicly reachable.`,
    );
  if (outcome instanceof Error) {
    const code = (outcome as NodeJS.ErrnoException).code;
    throw badInput(
      'url',
      `url's host ${host} could not be resolved${code ? ` (${code})` : ''}; webhook URLs must name a host with a public address.`,
    );
  }
}
