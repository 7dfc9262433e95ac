import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { Agent } from 'undici';
import { isBlockedAddress } from './url-policy.js';

export type Lookup = (
  hostname: string,
  options: { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export class BlockedAddressError extends Error {
  constructor(hostname: string, address: string) {
    super(
      `Refused to connect to ${hostname}: it resolves to ${address}, a private, loopback, link-local or reserved address.`,
    );
    this.name = 'BlockedAddressError';
  }
}

export const systemLookup = dnsLookup as unknown as Lookup;

/**
 * Every address `hostname` resolves to, or BlockedAddressError when any of them is private,
 * loopback, link-local or reserved (one bad address is enough: a client may pick any of them).
 * The check of a delivery's connection, and of a webhook URL when it is saved (url-resolution.ts).
 */
export function lookupPublic(
  lookup: Lookup,
  hostname: string,
  callback: (error: Error | null, addresses: LookupAddress[]) => void,
): void {
  lookup(hostname, { all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const blocked = addresses.find((a) => isBlockedAddress(a.address));
    if (blocked) return callback(new BlockedAddressError(hostname, blocked.address), []);
    callback(null, addresses);
  });
}

/**
 * An HTTP agent for production webhooks that checks the address actually connected to, after DNS
 * resolution, so a name that resolves (or re-resolves) to 127.0.0.1 or the metadata service is
 * refused. `lookup` is injectable so tests can point a public-looking name at a local address.
 */
export async function createGuardedAgent(lookup: Lookup = systemLookup): Promise<Agent> {
  const { Agent, buildConnector } = await import('undici');
  const guardedLookup = (
    hostname: string,
    options: object,
    callback: (error: Error | null, address?: string | LookupAddress[], family?: number) => void,
  ) => {
    lookupPublic(lookup, hostname, (error, addresses) => {
      if (error) return callback(error);
      if ((options as { all?: boolean }).all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`No address for ${hostname}`));
      callback(null, first.address, first.family);
    });
  };
  const connector = buildConnector({ lookup: guardedLookup as never, timeout: 10_000 });
  return new Agent({
    connect: (options, callback) => {
      // A literal IP skips DNS, so check it here too.
      const host = options.hostname.replace(/^\[|\]$/g, '');
      if (/^[\d.]+$|:/.test(host) && isBlockedAddress(host)) return callback(new BlockedAddressError(host, host), null);
      connector(options, callback);
    },
  });
}

/** Sandbox endpoints may be local (the seed allows HTTP for local testing). */
export async function createPlainAgent(): Promise<Agent> {
  const { Agent } = await import('undici');
  return new Agent({ connect: { timeout: 10_000 } });
}
