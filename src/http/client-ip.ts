import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';

/** What Fastify's `trustProxy` accepts, from TRUST_PROXY (see docs/configuration.md). */
export type TrustProxy = boolean | string[] | ((address: string, hop: number) => boolean);

export function trustProxyOf(setting: string | undefined): TrustProxy {
  const value = setting?.trim();
  if (!value || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return (_address, hop) => hop < hops;
  }
  return value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
}

/**
 * The client address of a raw request (the WebSocket upgrade) under the same trust rules as
 * Fastify's `request.ip`, so an IP allow-list sees one address whichever way a key comes in.
 */
export function clientIpResolver(trust: TrustProxy): (request: IncomingMessage) => string {
  if (trust === false) return (request) => request.socket.remoteAddress ?? 'unknown';
  const trusted = trust === true ? () => true : typeof trust === 'function' ? trust : proxyAddr.compile(trust);
  return (request) => proxyAddr(request, trusted) ?? request.socket.remoteAddress ?? 'unknown';
}
