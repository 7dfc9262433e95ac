import { composeServices } from '@apollo/composition';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import type { DocumentNode } from 'graphql';
import { expect } from 'vitest';

/**
 * A router over `subgraphs` as Apollo's gateway composes them (the composition must have no
 * errors), forwarding each operation's API key to every subgraph; started, to be stopped by the caller.
 */
export async function startRouter(
  subgraphs: { name: string; typeDefs: DocumentNode; url: string }[],
): Promise<ApolloServer<{ key: string }>> {
  const composed = composeServices(subgraphs);
  expect(composed.errors ?? []).toEqual([]);
  const router = new ApolloServer<{ key: string }>({
    gateway: new ApolloGateway({
      supergraphSdl: composed.supergraphSdl!,
      buildService: ({ url }) =>
        new RemoteGraphQLDataSource<{ key: string }>({
          url,
          willSendRequest: ({ request, context }) => {
            request.http?.headers.set('x-api-key', context.key);
          },
        }),
    }),
  });
  await router.start();
  return router;
}
