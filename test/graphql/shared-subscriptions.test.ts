import { type GraphQLObjectType, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { abilitiesOf } from '../../src/domain/auth/permissions.js';
import type { StoredEvent } from '../../src/domain/events/event.js';
import { RateLimiter } from '../../src/domain/limits/rate-limiter.js';
import type { GraphQLContext } from '../../src/graphql/context.js';
import { buildSchema } from '../../src/graphql/schema.js';
import { createSharedSubscribe } from '../../src/graphql/shared-subscriptions.js';
import { limitPolicyFrom } from '../../src/services.js';
import { loadConfig } from '../../src/config.js';

describe('shared subscription execution', () => {
  it("runs an event's selection once for every subscriber asking the same thing", async () => {
    const schema = buildSchema();
    const seqField = (schema.getType('Event') as GraphQLObjectType).getFields().seq!;
    const resolveSeq = seqField.resolve!;
    let executions = 0;
    seqField.resolve = (...args) => {
      executions++;
      return resolveSeq(...args);
    };
    const events: StoredEvent[] = [1, 2, 3].map((n) => ({
      id: `e${n}`,
      type: 'deposit.completed',
      created: 0,
      data: { n },
      userId: 'u1',
      environment: 'sandbox',
      seq: n,
    }));
    const contextFor = (userId: string) =>
      ({
        principal: {
          kind: 'api_key',
          credentialId: `k-${Math.random()}`,
          userId,
          environment: 'sandbox',
          abilities: abilitiesOf('READ_ONLY'),
        },
        credentialRejected: false,
        clientIp: '127.0.0.1',
        services: {
          rateLimiter: new RateLimiter(undefined),
          limitPolicy: limitPolicyFrom(loadConfig({})),
          eventFeed: {
            subscribe: async function* () {
              yield* events.map((e) => ({ ...e, userId }));
            },
          },
        },
      }) as unknown as GraphQLContext;
    const subscribe = createSharedSubscribe();
    const document = parse('subscription { events { id seq data } }');
    const collect = async (context: GraphQLContext) => {
      const stream = (await subscribe({ schema, document, contextValue: context })) as AsyncIterable<{
        data?: { events: { seq: number } };
      }>;
      const seen: number[] = [];
      for await (const result of stream) seen.push(result.data!.events.seq);
      return seen;
    };
    const sameUser = await Promise.all(Array.from({ length: 10 }, () => collect(contextFor('u1'))));
    expect(sameUser.every((seen) => seen.join() === '1,2,3')).toBe(true);
    expect(executions).toBe(3);
    await collect(contextFor('u2'));
    expect(executions).toBe(6);
  });
});
