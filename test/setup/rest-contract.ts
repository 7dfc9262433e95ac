import { afterEach, expect } from 'vitest';
import { restContractViolations } from '../helpers/rest-contract.js';

// Fails the test during which a REST 400 leaked GraphQL text (see test/helpers/rest-contract.ts).
afterEach(() => {
  const found = restContractViolations.splice(0);
  expect(found, 'REST 400 answers that broke the error contract').toEqual([]);
});
