import { sandboxPrincipalOf } from '../../domain/sandbox/sandbox-principal.js';
import type { Resolvers } from '../generated/resolvers-types.js';

/** Each field is one call of the test clocks' service, which takes only a sandbox principal. */
const sandbox = (principal: Parameters<typeof sandboxPrincipalOf>[0] | null | undefined) =>
  sandboxPrincipalOf(principal!, 'Test clocks');

export const testClockResolvers: Resolvers = {
  Query: {
    testClocks: (_root, _args, { principal, services }) => services.testClockService.list(sandbox(principal)),
    testClock: (_root, { id }, { principal, services }) => services.testClockService.get(sandbox(principal), id),
  },
  Mutation: {
    createTestClock: (_root, { name }, { principal, services }) =>
      services.testClockService.create(sandbox(principal), name),
    attachTestClock: (_root, { id }, { principal, services }) =>
      services.testClockService.attach(sandbox(principal), id),
    detachTestClock: (_root, { id }, { principal, services }) =>
      services.testClockService.detach(sandbox(principal), id),
    advanceTestClock: (_root, { id, seconds }, { principal, services }) =>
      services.testClockService.advance(sandbox(principal), id, seconds),
    deleteTestClock: (_root, { id }, { principal, services }) =>
      services.testClockService.delete(sandbox(principal), id),
  },
};
