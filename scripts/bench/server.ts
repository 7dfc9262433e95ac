/**
 * The process under load in `npm run bench`: the real gateway, plus two baselines built from the
 * same services so the comparison isolates the pipeline cost:
 *   - a raw Fastify route doing the auth and user lookup of GET /api/v1/user/me, by hand;
 *   - a bare Apollo Server on Fastify serving the same `me` resolver, with no guards, limits,
 *     loaders or error formatting.
 * Prints one JSON line with ports and a key once ready.
 */
import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import fastifyApollo from '@as-integrations/fastify';
import Fastify from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { systemClock } from '../../src/domain/clock.js';
import { displayName, type User } from '../../src/domain/users/user.js';
import { credentialFrom } from '../../src/graphql/context.js';
import { createServices } from '../../src/services.js';

const config = loadConfig(process.env, {
  LOG_LEVEL: 'silent',
  SEED_DEMO: false,
  WORKERS: false,
  RATE_LIMIT_PER_MINUTE: 1_000_000_000,
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: 1_000_000_000,
});
const database = await openDatabase({ databaseUrl: config.DATABASE_URL, pgliteDataDir: 'memory://' });
const services = createServices(config, database.db, systemClock, () => undefined);
const user = await services.users.createUser({
  email: `bench-${Date.now()}@example.test`,
  firstName: 'Bench',
  lastName: 'Mark',
});
const { key } = await services.apiKeys.create({
  userId: user.id,
  name: 'bench',
  environment: 'sandbox',
  permission: 'FULL_ACCESS',
});

const app = await buildApp({ services });
const userJson = (u: User) => ({ ...u, name: displayName(u), resetToken: null, resetTokenExpiry: null });

// Baseline 1: the same work as GET /api/v1/user/me, written directly as a Fastify route.
app.get('/bench/raw/me', async (request, reply) => {
  const credential = credentialFrom(request.headers);
  const principal = credential ? await services.apiKeys.authenticate(credential) : undefined;
  if (!principal) return reply.code(401).send({ statusCode: 401, message: 'Unauthorized', error: 'Unauthorized' });
  const [found] = await services.users.usersByIds([principal.userId]);
  return { statusCode: 200, message: 'User retrieved successfully', data: userJson(found!), errors: {} };
});
await app.listen({ port: 0, host: '127.0.0.1' });

// Baseline 2: bare Apollo Server on Fastify with the same `me` resolver.
const bare = Fastify();
const apollo = new ApolloServer<{ credential?: string }>({
  typeDefs: `type User { id: ID! email: String! name: String! firstName: String lastName: String }
             type Query { me: User }`,
  resolvers: {
    Query: {
      me: async (_root, _args, context) => {
        const principal = context.credential ? await services.apiKeys.authenticate(context.credential) : undefined;
        if (!principal) throw new Error('Unauthorized');
        const [found] = await services.users.usersByIds([principal.userId]);
        return userJson(found!);
      },
    },
  },
  plugins: [ApolloServerPluginInlineTraceDisabled(), ApolloServerPluginLandingPageDisabled()],
});
await apollo.start();
await bare.register(fastifyApollo(apollo), {
  context: async (request) => ({ credential: credentialFrom(request.headers) }),
});
await bare.listen({ port: 0, host: '127.0.0.1' });

const portOf = (server: typeof app) => (server.server.address() as { port: number }).port;
process.stdout.write(
  `${JSON.stringify({ ready: true, pid: process.pid, gateway: portOf(app), bareApollo: portOf(bare), key, database: database.describe })}\n`,
);

process.on('SIGTERM', async () => {
  await Promise.all([app.close(), bare.close(), apollo.stop()]);
  await database.close();
  process.exit(0);
});
