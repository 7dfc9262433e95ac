import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAMES_PER_CREDENTIAL } from '../../src/observability/operation-names.js';
import { graphql, seedTenant, startTestApp, type StartedTestApp } from '../helpers/app.js';
import { MetricsText } from '../helpers/metrics-text.js';

const OPERATIONS = 'gateway_graphql_operations_total';

/**
 * The `operation` label of GraphQL metrics cannot be spent by callers: names from callers without
 * a credential never become labels, and one credential's flood of names leaves room for others'.
 */
describe('GraphQL operation labels', () => {
  let s: StartedTestApp;
  beforeAll(async () => {
    s = await startTestApp({
      config: { RATE_LIMIT_PER_MINUTE: 100_000, RATE_LIMIT_ANONYMOUS_PER_MINUTE: 100_000 },
    });
  });
  afterAll(() => s.t.close());

  /** A run's own names: files of one worker share the process, and so its known names. */
  const run = Date.now().toString(36);
  const counted = async (operation: string) => (await MetricsText.of(s.t.app)).sum(OPERATIONS, { operation });

  it('counts names of unauthenticated callers as `unauthenticated`, and still labels an authenticated caller’s names', async () => {
    const before = await counted('unauthenticated');
    for (let i = 0; i < 205; i++) await graphql(s.t.app, undefined, `query Junk${run}x${i} { __typename }`);
    const named = `Real${run}`;
    const real = await graphql(s.t.app, s.tenant.keys.READ_ONLY, `query ${named} { apiInfo { version } }`);
    expect(real.status).toBe(200);

    const metrics = await MetricsText.of(s.t.app);
    expect(metrics.sum(OPERATIONS, { operation: named, type: 'query', outcome: 'ok' })).toBe(1);
    expect(metrics.series(OPERATIONS).filter((m) => m.labels.operation?.startsWith(`Junk${run}`))).toEqual([]);
    expect(metrics.sum(OPERATIONS, { operation: 'unauthenticated' }) - before).toBe(205);
  });

  it('lets one key make at most its share of names known: another key’s names, old and new, keep their labels', async () => {
    const flooder = await seedTenant(s.t.services);
    const partner = await seedTenant(s.t.services);
    const early = `PartnerEarly${run}`;
    const late = `PartnerLate${run}`;
    await graphql(s.t.app, partner.keys.READ_ONLY, `query ${early} { apiInfo { version } }`);

    for (let i = 0; i < 300; i++)
      await graphql(s.t.app, flooder.keys.READ_ONLY, `query Flood${run}x${i} { apiInfo { version } }`);
    await graphql(s.t.app, partner.keys.READ_ONLY, `query ${early} { apiInfo { version } }`);
    await graphql(s.t.app, partner.keys.READ_ONLY, `query ${late} { apiInfo { version } }`);

    const metrics = await MetricsText.of(s.t.app);
    expect(metrics.sum(OPERATIONS, { operation: early })).toBe(2);
    expect(metrics.sum(OPERATIONS, { operation: late })).toBe(1);
    const flood = metrics.series(OPERATIONS).filter((m) => m.labels.operation?.startsWith(`Flood${run}`));
    expect(flood.length).toBe(NAMES_PER_CREDENTIAL);
    // A name the flooder made known is its label for every caller, at no cost to them.
    await graphql(s.t.app, partner.keys.READ_ONLY, `query Flood${run}x0 { apiInfo { version } }`);
    expect(await counted(`Flood${run}x0`)).toBe(2);
  });
});
