import type { CredentialRef } from '../../domain/graphql-access/graphql-access.js';
import type { CredentialInput, Resolvers } from '../generated/resolvers-types.js';

const refOf = ({ kind, id }: CredentialInput): CredentialRef => ({
  kind: kind === 'API_KEY' ? 'api_key' : 'connect_app',
  id,
});

export const graphqlAccessResolvers: Resolvers = {
  Query: {
    graphqlAccess: (_root, { credential }, { principal, services }) =>
      services.graphqlAccess.view(principal!, refOf(credential)),
  },
  Mutation: {
    registerTrustedDocuments: (_root, { input }, { principal, services }) =>
      services.graphqlAccess.register(principal!, refOf(input.credential), input.documents),
    removeTrustedDocuments: (_root, { credential, hashes }, { principal, services }) =>
      services.graphqlAccess.remove(principal!, refOf(credential), hashes),
    setGraphQLAccess: (_root, { input }, { principal, services }) =>
      services.graphqlAccess.change(principal!, refOf(input.credential), {
        trustedDocumentsOnly: input.trustedDocumentsOnly,
        maxCost: input.maxComplexity,
        maxDepth: input.maxDepth,
        allowedOrigins: input.allowedOrigins,
      }),
  },
  GraphQLAccess: {
    kind: (view) => (view.credential.kind === 'api_key' ? 'API_KEY' : 'CONNECT_APP'),
    id: (view) => view.credential.id,
    maxComplexity: (view) => view.maxCost,
    trustedDocuments: (view) => view.documents,
  },
  TrustedDocument: {
    id: (document) => `sha256:${document.hash}`,
    sha256Hash: (document) => document.hash,
  },
};
