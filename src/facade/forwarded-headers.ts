import type { IncomingHttpHeaders } from 'node:http';

/**
 * Hop-by-hop fields (RFC 9110 §7.6.1): they describe one connection, not the message, so a proxy
 * drops them in both directions, with every field the Connection header names. `proxy-*` are
 * meant for a proxy in between; `host` is the upstream's own; `expect` is answered by this server
 * (Node answers 100-continue).
 */
const NEVER_FORWARDED = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
  'host',
  'expect',
]);

/**
 * Who the client is, as proxies tell it: set by this facade from the address it saw (`TRUST_PROXY`
 * decides which proxies before it are believed), never passed on as a caller wrote it. A caller's
 * own `X-Forwarded-For: 10.0.0.1` would otherwise reach an upstream that trusts the facade as a
 * proxy as the caller's address, past its keys' IP allow-lists; and `X-Forwarded-Host` could
 * change the links it builds.
 */
const CLIENT_IDENTITY = new Set([
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-real-ip',
]);

/**
 * The fields of a message a proxy passes on: everything but the hop-by-hop ones. A request's
 * `content-length` goes too: its body is sent as the bytes received, and undici writes their length.
 */
export function endToEndHeaders(
  headers: IncomingHttpHeaders,
  message: 'request' | 'response',
): Record<string, string | string[]> {
  const named = connectionOptions(headers.connection);
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || NEVER_FORWARDED.has(name) || named.has(name)) continue;
    if (message === 'request' && (name === 'content-length' || CLIENT_IDENTITY.has(name))) continue;
    kept[name] = value;
  }
  return kept;
}

function connectionOptions(value: string | string[] | undefined): Set<string> {
  const list = Array.isArray(value) ? value.join(',') : (value ?? '');
  return new Set(
    list
      .split(',')
      .map((option) => option.trim().toLowerCase())
      .filter(Boolean),
  );
}
