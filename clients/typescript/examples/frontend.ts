import { createGraphQLClient, graphql } from '../src/index.js';

// A partner frontend in the browser: its key, or its Connect app, runs trusted documents only, so
// the gateway runs the documents below and nothing else for it, whoever holds the credential.
//   1. `npm run clients` writes src/generated/graphql/persisted-documents.json (every graphql(...) here).
//   2. A server key of the account registers them for the frontend's key, and switches it over:
//      npm run trusted-documents -- --credential api_key:<frontend key id> --enforce \
//        --key <server key> clients/typescript/src/generated/graphql/persisted-documents.json
//   3. The frontend sends each document's hash (`documentId`) instead of its text.
const MyProfile = graphql(`
  query MyProfile { me { id firstName email } }
`);
const MyBalance = graphql(`
  query MyBalance { walletBalance { currency available held } }
`);

const baseUrl = process.env.GATEWAY_URL ?? 'http://localhost:4000';

/** `apiKey` for a partner's own frontend key; `accessToken` for a Connect app acting for a user. */
export const frontendClient = (credential: { apiKey?: string; accessToken?: string }, url = baseUrl) =>
  createGraphQLClient({ baseUrl: url, ...credential, trustedDocuments: true });

/** The signed-in user's name and wallet, as a page would show them. */
export async function dashboardHeader(gql: ReturnType<typeof frontendClient>) {
  const { me } = await gql.request(MyProfile);
  const { walletBalance } = await gql.request(MyBalance);
  return { name: me.firstName, email: me.email, balance: walletBalance }; // balance: { currency: 'NGN', available, held }
}
