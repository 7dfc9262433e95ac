import { publicUrlOf } from '../../config.js';
import type { Resolvers } from '../generated/resolvers-types.js';

export const API_VERSION = '1.0';

export const apiInfoResolvers: Resolvers = {
  Query: {
    apiInfo: (_root, _args, { services }) => {
      const base = publicUrlOf(services.config);
      return {
        service: 'Partner Gateway',
        version: API_VERSION,
        graphqlUrl: `${base}/graphql`,
        restDocsUrl: `${base}/api/v1/docs`,
        openApiUrl: `${base}/api/v1/openapi.json`,
      };
    },
  },
};
