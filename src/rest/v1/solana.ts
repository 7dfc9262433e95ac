import { Type } from '@sinclair/typebox';
import { defineRoutes } from '../route.js';

export const solanaRoutes = defineRoutes([
  {
    method: 'GET',
    path: '/api/v1/solana/address',
    tag: 'Solana wallet',
    summary: "The user's wallet address",
    description: 'The custodial wallet of the caller\'s user and environment, created on first use. A Solana address is the same on every cluster, so there is no network parameter.',
    operation: 'query SolanaWallet { solanaWallet { address } }',
    message: 'Wallet address retrieved successfully',
    response: Type.Object({ address: Type.String({ description: 'Base58 public key.' }) }),
  },
]);
