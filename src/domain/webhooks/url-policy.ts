import ipaddr from 'ipaddr.js';
import type { Environment } from '../auth/permissions.js';
import { badInput } from '../errors.js';

/** Ranges a production webhook may never reach: private networks, loopback, link-local (cloud metadata), and the like. */
const BLOCKED_RANGES = new Set([
  'unspecified',
  'broadcast',
  'multicast',
  'linkLocal',
  'loopback',
  'carrierGradeNat',
  'private',
  'reserved',
  'uniqueLocal',
  'ipv4Mapped',
  'rfc6145',
  'rfc6052',
  '6to4',
  'teredo',
  'benchmarking',
  'amt',
  'as112',
  'deprecated',
  'orchid2',
]);

/** True when a resolved address is somewhere a production webhook must not go. */
export function isBlockedAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return BLOCKED_RANGES.has(parsed.range());
}

/** The rules of a webhook URL that hold in every environment: absolute, http(s), no credentials. */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badInput('url', 'url must be an absolute http(s) URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw badInput('url', 'url must use https (or http in sandbox).');
  if (url.username || url.password) throw badInput('url', 'url must not contain credentials.');
  if (raw.length > 2048) throw badInput('url', 'url must be at most 2048 characters.');
  return url;
}

/**
 * Checks a webhook URL when an endpoint is saved. Production: HTTPS, no credentials in the URL,
 * and no literal blocked address; with local receivers off the name's addresses are looked up too
 * (url-resolution.ts), and checked again when each connection is made (safe-http.ts), so DNS
 * cannot be used to slip past. Sandbox: HTTP and local addresses are allowed
 * for local testing only while `localReceivers` is on (a development setting, never on a production
 * server); otherwise sandbox URLs follow the production rules too.
 */
export function validateWebhookUrl(raw: string, environment: Environment, localReceivers = true): URL {
  const url = parseWebhookUrl(raw);
  if (environment === 'production' || !localReceivers) {
    if (url.protocol !== 'https:') throw badInput('url', 'Production webhook URLs must use https.');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (ipaddr.isValid(host) && isBlockedAddress(host)) {
      throw badInput(
        'url',
        'Production webhook URLs must not point at private, loopback, link-local or metadata addresses.',
      );
    }
    // A fully qualified name may end in a dot: `localhost.` is localhost.
    const name = host.replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.internal')) {
      throw badInput('url', 'Production webhook URLs must be publicly reachable.');
    }
  }
  return url;
}
