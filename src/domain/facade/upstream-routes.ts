/**
 * The route map: where a facade asks the operations the spec only names ("Operations that are
 * named only": their method and path are not shown). `gateway` places them at this gateway's own
 * REST paths, so a facade in front of another Partner Gateway serves them; `spec` places none, and
 * the graph a facade serves leaves their fields out (graphql/facade-fields.ts).
 */
export type RouteSetting = 'gateway' | 'spec';

/** The named-only operations a facade knows how to ask, each with the request this gateway's REST takes. */
export const NAMED_OPERATIONS = {
  'bills.buyMobileData': { method: 'POST', path: '/api/v1/bills/pay/data' },
  'bills.subscribeCableTv': { method: 'POST', path: '/api/v1/bills/pay/cable' },
  // "Offramp ledger: transaction history": read by the gap-filling job only (offramp-order-changes.ts).
  'offramp.orders': { method: 'GET', path: '/api/v1/offramp/ledger/transactions' },
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
