export { createRestClient, type RestClient, type RestClientOptions, type RestPaths, type RestSchemas } from './rest.js';
export {
  createGraphQLClient,
  graphql,
  GraphQLRequestError,
  type GraphQLClient,
  type GraphQLClientOptions,
} from './graphql.js';
