import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: [
    './src/db/schema.ts',
    './src/db/offramp-schema.ts',
    './src/db/ledger-schema.ts',
    './src/db/wallet-schema.ts',
    './src/db/bills-schema.ts',
    './src/db/solana-schema.ts',
    './src/db/chain-schema.ts',
    './src/db/customers-schema.ts',
    './src/db/accounts-schema.ts',
    './src/db/books-schema.ts',
    './src/db/lifecycle-schema.ts',
    './src/db/reconciliation-schema.ts',
    './src/db/controls-schema.ts',
    './src/db/lists-schema.ts',
    './src/db/facade-schema.ts',
    './src/db/facade-keys-schema.ts',
    './src/db/sandbox-schema.ts',
    './src/db/asset-ledger-schema.ts',
    './src/db/evm-sandbox-schema.ts',
    './src/db/evm-wallet-schema.ts',
  ],
  out: './src/db/migrations',
});
