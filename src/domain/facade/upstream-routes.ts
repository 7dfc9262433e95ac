import { DomainError } from '../errors.js';

/**
 * The route map: where a facade asks the operations the spec only names ("Operations that are
 * named only": their method and path are not shown). `gateway` places them at this gateway's own
 * REST paths, so a facade in front of another Partner Gateway serves them; `spec` places none, and
 * the graph a facade serves leaves their fields out (graphql/facade-fields.ts).
 */
/** The route maps a facade can run with (UPSTREAM_ROUTES). */
export const ROUTE_SETTINGS = ['gateway', 'spec'] as const;
export type RouteSetting = (typeof ROUTE_SETTINGS)[number];

/** The named-only operations a facade knows how to ask, each with the request this gateway's REST takes. */
export const NAMED_OPERATIONS = {
  'bills.buyMobileData': { method: 'POST', path: '/api/v1/bills/pay/data' },
  'bills.subscribeCableTv': { method: 'POST', path: '/api/v1/bills/pay/cable' },
  // "Offramp ledger: transaction history": read by the gap-filling job only (offramp-order-changes.ts).
  'offramp.orders': { method: 'GET', path: '/api/v1/offramp/ledger/transactions' },
  // The EVM wallet's operations (the spec names six; the address beside them), at docs/evm.md's paths.
  'evm.address': { method: 'GET', path: '/api/v1/evm/address' },
  'evm.networks': { method: 'GET', path: '/api/v1/evm/networks' },
  'evm.balance': { method: 'GET', path: '/api/v1/evm/{network}/balance' },
  'evm.tokenBalance': { method: 'GET', path: '/api/v1/evm/{network}/tokens/{token}/balance' },
  'evm.portfolio': { method: 'GET', path: '/api/v1/evm/{network}/portfolio' },
  'evm.sendNative': { method: 'POST', path: '/api/v1/evm/{network}/send-native' },
  'evm.sendToken': { method: 'POST', path: '/api/v1/evm/{network}/send-token' },
} as const;

export type NamedOperation = keyof typeof NAMED_OPERATIONS;

export interface UpstreamRoute {
  method: 'GET' | 'POST';
  path: string;
}

export type RouteMap = Partial<Record<NamedOperation, UpstreamRoute>>;

export function routeMapOf(setting: RouteSetting): RouteMap {
  return setting === 'gateway' ? { ...NAMED_OPERATIONS } : {};
}

/**
 * Where the route map places `operation`, its `{name}` segments filled with `params` (each
 * percent-encoded: the caller's text never adds a segment). Placed nowhere, the graph a facade
 * serves has no `field`, so no caller reaches this; it refuses rather than guess a path.
 */
export function placedRoute(
  routes: RouteMap,
  operation: NamedOperation,
  field: string,
  params: Readonly<Record<string, string>> = {},
): UpstreamRoute {
  const route = routes[operation];
  if (!route)
    throw new DomainError(
      'NOT_IN_FACADE',
      `${field} is not served: UPSTREAM_ROUTES places it nowhere (docs/facade.md).`,
    );
  const path = route.path.replace(/\{(\w+)\}/g, (_whole, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`the route of ${operation} needs ${name}`);
    return encodeURIComponent(value);
  });
  return { method: route.method, path };
}

/**
 * The mutations a facade keeps an Idempotency-Key record for (facade-keys.ts), by route-map name:
 * the ones that move money. Per name, the route map says whether the upstream honours the key.
 */
export const KEYED_MUTATIONS = [
  'bills.buyAirtime',
  'bills.payElectricity',
  'bills.buyMobileData',
  'bills.subscribeCableTv',
  'deposits.withPaymentMethod',
  'solana.transferToken',
  'solana.swap',
  'evm.sendNative',
  'evm.sendToken',
] as const;

export type KeyedMutation = (typeof KEYED_MUTATIONS)[number];

/**
 * The mutations whose upstream honours `Idempotency-Key` (UPSTREAM_KEYED_ROUTES): `all`, `none`,
 * or a comma-separated list of names. Unset: `all` in front of another Partner Gateway, `none` in
 * front of the spec's (which says nothing of the header). Throws naming an unknown name.
 */
export function keyedRoutesOf(setting: RouteSetting, list: string | undefined): ReadonlySet<KeyedMutation> {
  const given = (list ?? (setting === 'gateway' ? 'all' : 'none')).trim();
  if (given === 'all') return new Set(KEYED_MUTATIONS);
  if (given === 'none') return new Set();
  const names = given.split(',').map((name) => name.trim());
  const unknown = names.find((name) => !(KEYED_MUTATIONS as readonly string[]).includes(name));
  if (unknown !== undefined) throw new RangeError(`not a mutation of the route map: ${unknown}`);
  return new Set(names as KeyedMutation[]);
}
