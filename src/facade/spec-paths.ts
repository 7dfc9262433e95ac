/**
 * Every REST v1 path the spec gives with its method (partner-gateway-api.md, Endpoints), in
 * Fastify's path syntax. In facade mode each is passed through to the upstream as it came, and the
 * gateway's own route for it is not registered.
 */
export const SPEC_REST_PATHS = [
  { method: 'GET', path: '/api/v1' },
  { method: 'GET', path: '/api/v1/user/me' },
  { method: 'POST', path: '/api/v1/wallet/deposit/payment-method' },
  { method: 'POST', path: '/api/v1/bills/pay/electricity' },
  { method: 'POST', path: '/api/v1/bills/pay/airtime' },
  { method: 'POST', path: '/api/v1/bills/buy-airtime' },
  { method: 'POST', path: '/api/v1/bills/validate' },
  { method: 'GET', path: '/api/v1/bills/records' },
  { method: 'GET', path: '/api/v1/bills/records/reference/:reference' },
  { method: 'GET', path: '/api/v1/solana-exchange/quote/token-to-sol' },
  { method: 'GET', path: '/api/v1/solana-exchange/quote/token-to-token' },
  { method: 'POST', path: '/api/v1/solana-exchange/swap-token-to-sol' },
  { method: 'POST', path: '/api/v1/solana/transfer-token' },
  { method: 'GET', path: '/api/v1/solana/address' },
  { method: 'GET', path: '/api/v1/offramp/exchange/quote' },
  { method: 'GET', path: '/api/v1/offramp/exchange/assets' },
  { method: 'POST', path: '/api/v1/customers/:businessId' },
] as const;

const SPEC_ROUTE_KEYS = new Set<string>(SPEC_REST_PATHS.map(({ method, path }) => `${method} ${path}`));

/** True for a route the spec gives (method and path as the route table writes them). */
export const isSpecRoute = (method: string, path: string) => SPEC_ROUTE_KEYS.has(`${method} ${path}`);
