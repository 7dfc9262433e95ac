import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed GraphQL documents for the TypeScript client (graphql-codegen's client preset): every
 * `graphql(...)` document under src/ and examples/ gets its result and variables types, checked
 * against the merged SDL the gateway serves. `npm run clients` writes src/generated/graphql/; CI
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
      presetConfig: { fragmentMasking: false },
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
