import { Type } from '@sinclair/typebox';
import { defineRoutes } from '../route.js';
import { DateTimeString, Nullable } from '../schemas.js';

/**
 * REST v1 portfolio: everything the user holds across the NGN wallet, Solana and every EVM
 * network, in one answer. The spec names "wallet and crypto portfolio"; /api/v1/wallet/portfolio
 * keeps its NGN-and-Solana shape, and this path is the gateway's own (docs/portfolio.md).
 */
const HOLDING_FIELDS =
  'symbol token amount amountRaw decimals usdValue ngnValue priced usdPrice priceSource priceAsOf priceAgeSeconds';
const Holding = Type.Object(
  {
    symbol: Type.String(),
    token: Nullable(Type.String({ description: 'The contract or mint; null for a native coin and for naira.' })),
    amount: Type.String({ description: 'In units of the asset (naira for NGN), a decimal string.' }),
    amountRaw: Type.String({ description: 'In raw base units (kobo for NGN), an integer string.' }),
    decimals: Type.Integer(),
    usdValue: Type.Number({ description: 'USD, 2 decimals; 0 when unpriced.' }),
    ngnValue: Type.Number({ description: 'NGN (naira), 2 decimals; 0 when unpriced.' }),
    priced: Type.Boolean(),
    usdPrice: Nullable(Type.Number({ description: 'USD per unit.' })),
    priceSource: Nullable(Type.String()),
    priceAsOf: Nullable(DateTimeString),
    priceAgeSeconds: Nullable(Type.Integer()),
  },
  { title: 'PortfolioHolding' },
);

export const portfolioRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/portfolio',
    tag: 'Portfolio',
    summary: 'Everything held, valued in USD and NGN',
    description:
      'The NGN wallet, the Solana wallet (default cluster) and every EVM network as parts; each holding valued in USD and NGN with its price, the price’s source and its age. A network never used is an empty part (its chain is not created). Parts sum their holdings and the totals sum the parts, to the cent and the kobo.',
    operation: `query Portfolio { portfolio { usdValue ngnValue ngnPerUsd rateSource rateAsOf valuedAt parts { family network address touched usdValue ngnValue holdings { ${HOLDING_FIELDS} } } } }`,
    message: 'Portfolio retrieved successfully',
    response: Type.Object(
      {
        usdValue: Type.Number({ description: 'USD: the sum of the parts.' }),
        ngnValue: Type.Number({ description: 'NGN (naira): the sum of the parts.' }),
        ngnPerUsd: Type.Number(),
        rateSource: Type.String(),
        rateAsOf: DateTimeString,
        valuedAt: DateTimeString,
        parts: Type.Array(
          Type.Object(
            {
              family: Type.String({ description: 'ngn, solana or evm.' }),
              network: Nullable(Type.String()),
              address: Nullable(Type.String()),
              touched: Type.Boolean(),
              usdValue: Type.Number(),
              ngnValue: Type.Number(),
              holdings: Type.Array(Holding),
            },
            { title: 'PortfolioPart' },
          ),
        ),
      },
      { title: 'Portfolio' },
    ),
  },
]);
