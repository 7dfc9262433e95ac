import { digestOf, newOpaqueToken } from './opaque-token.js';
import type { Environment } from './permissions.js';

/**
 * API key values: a prefix that tells the environment at a glance (and to secret scanners),
 * then 32 random bytes (256 bits) in base64url. Only the SHA-256 is stored: the value carries
 * enough entropy that a slow hash adds nothing, and lookups stay one indexed equality.
 */
const PREFIX: Record<Environment, string> = { sandbox: 'pgw_sbx_', production: 'pgw_live_' };
const SHAPE = /^pgw_(sbx|live)_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(environment: Environment): string {
  return newOpaqueToken(PREFIX[environment]);
}

export function hashApiKey(value: string): string {
  return digestOf(value);
}

/** Cheap check before any lookup: anything not shaped like a key is refused without a query. */
export function looksLikeApiKey(value: string): boolean {
  return SHAPE.test(value);
}

/** What listings show: the prefix and four characters, enough to tell keys apart, useless to an attacker. */
export function displayPrefixOf(value: string): string {
  const cut = value.indexOf('_', 4) + 1;
  return `${value.slice(0, cut + 4)}…`;
}
