import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed GraphQL documents for the TypeScript client (graphql-codegen's client preset): every
 * `graphql(...)` document under src/ and examples/ gets its result and variables types, checked
 * against the merged SDL the gateway serves, and the persisted-documents manifest of them all.
 * `npm run clients` writes src/generated/graphql/; CI
 * regenerates it and fails if it differs from what is committed.
 */
const config: CodegenConfig = {
  schema: 'src/graphql/generated/schema.graphql',
  documents: [
    'clients/typescript/src/**/*.ts',
    'clients/typescript/examples/**/*.ts',
    '!clients/typescript/src/generated/**',
  ],
  overwrite: true,
  ignoreNoDocuments: false,
  generates: {
    'clients/typescript/src/generated/graphql/': {
      preset: 'client',
      // persisted-documents.json: each document's text by its SHA-256 (`sha256:<hex>`), the manifest
      // `npm run trusted-documents` registers for a frontend's key or app; each document carries its
      // hash (`__meta__.hash`) for createGraphQLClient's `trustedDocuments` mode.
      presetConfig: { fragmentMasking: false, persistedDocuments: { hashAlgorithm: 'sha256' } },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        emitLegacyCommonJSImports: false,
        scalars: { DateTime: 'string', DateOrDateTime: 'string', JSON: 'unknown', SafeInt: 'number' },
      },
    },
  },
};

export default config;
