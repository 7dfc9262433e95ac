import type { RestRoute } from '../route.js';
import { apiKeyRoutes } from './api-keys.js';
import { eventRoutes } from './events.js';
import { billRoutes } from './bills.js';
import { offrampRoutes } from './offramp.js';
import { paymentMethodRoutes } from './payment-methods.js';
import { transactionRoutes } from './transactions.js';
import { walletRoutes } from './wallet.js';
import { rootRoutes } from './root.js';
import { solanaRoutes } from './solana.js';
import { solanaExchangeRoutes } from './solana-exchange.js';
import { evmRoutes } from './evm.js';
import { evmExchangeRoutes } from './evm-exchange.js';
import { portfolioRoutes } from './portfolio.js';
import { customerRoutes } from './customers.js';
import { userRoutes } from './users.js';
import { webhookRoutes } from './webhooks.js';
import { statementRoutes } from './statements.js';
import { auditRoutes } from './audit.js';
import { graphqlAccessRoutes } from './graphql-access.js';
import { testClockRoutes } from './test-clocks.js';

/** The REST v1 route table: every path of the API, one domain file each. */
export const restV1Routes: RestRoute[] = [
  ...rootRoutes,
  ...userRoutes,
  ...eventRoutes,
  ...apiKeyRoutes,
  ...webhookRoutes,
  ...offrampRoutes,
  ...walletRoutes,
  ...statementRoutes,
  ...paymentMethodRoutes,
  ...transactionRoutes,
  ...billRoutes,
  ...solanaRoutes,
  ...solanaExchangeRoutes,
  ...evmRoutes,
  ...evmExchangeRoutes,
  ...portfolioRoutes,
  ...customerRoutes,
  ...auditRoutes,
  ...graphqlAccessRoutes,
  ...testClockRoutes,
];
