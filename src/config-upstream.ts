import type { Config } from './config.js';
import { keyedRoutesOf } from './domain/facade/upstream-routes.js';
import { isBlockedAddress } from './domain/webhooks/url-policy.js';

/**
 * True when a URL's host is a private, loopback, link-local or reserved address, or a name that
 * only ever means one (`localhost`, `*.localhost`, `*.internal`). Names that resolve to such an
 * address are refused when the connection is made (upstream-agent.ts), as webhook deliveries are.
 */
export function namesPrivateHost(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (/^[\d.]+$|:/.test(host)) return isBlockedAddress(host);
  const name = host.replace(/\.$/, '').toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.internal');
}

/**
 * What is wrong with the facade settings, one line per variable, naming it and never its value
 * (an upstream URL may carry credentials). In production an upstream on a private address, or
 * reached over plain http (the partners' keys travel with every request), needs
 * UPSTREAM_PRIVATE_ADDRESSES=true: the same rule production webhooks follow, with a way out for an
 * upstream that sits on the facade's own private network.
 */
export function upstreamProblems(config: Config): string[] {
  if (config.GATEWAY_MODE !== 'facade') return [];
  if (!config.UPSTREAM_URL)
    return ['  UPSTREAM_URL: required with GATEWAY_MODE=facade (the base URL of the REST v1 deployment it fronts)'];
  const problems: string[] = [];
  const url = new URL(config.UPSTREAM_URL);
  if (url.search || url.hash)
    problems.push('  UPSTREAM_URL: expected a base URL without query or fragment (request paths are appended to it)');
  if (config.NODE_ENV === 'production' && config.UPSTREAM_PRIVATE_ADDRESSES !== true) {
    if (namesPrivateHost(url))
      problems.push(
        '  UPSTREAM_URL: names a private, loopback or link-local host; production needs UPSTREAM_PRIVATE_ADDRESSES=true for that',
      );
    else if (url.protocol !== 'https:')
      problems.push(
        "  UPSTREAM_URL: expected https in production (partners' keys travel with every request); UPSTREAM_PRIVATE_ADDRESSES=true allows http",
      );
  }
  if (config.SEED_DEMO)
    problems.push('  SEED_DEMO: may not be on with GATEWAY_MODE=facade (its keys live in the upstream)');
  try {
    keyedRoutesOf(config.UPSTREAM_ROUTES, config.UPSTREAM_KEYED_ROUTES);
  } catch (error) {
    problems.push(
      `  UPSTREAM_KEYED_ROUTES: expected all, none or a comma-separated list of the route map's mutations (docs/facade.md); ${(error as Error).message}`,
    );
  }
  return problems;
}
