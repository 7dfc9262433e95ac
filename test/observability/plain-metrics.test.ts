import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { PlainCounter, PlainHistogram } from '../../src/observability/plain-metrics.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// GraphQL operations as graphql-plugin.ts counts them: operation, type, outcome and seconds.
const observations: Array<[string, string, string, number]> = [
  ['Me', 'query', 'ok', 0.0012],
  ['Me', 'query', 'ok', 0.005],
  ['Me', 'query', 'ok', 0.0051],
  ['anonymous', 'query', 'error', 0.3],
  ['Transfer', 'mutation', 'ok', 0.02],
  ['other', 'unknown', 'invalid', 0.0001],
  ['Me', 'query', 'error', 12],
  ['Transfer', 'mutation', 'ok', 10],
];

/** The same observations through prom-client's own Counter and Histogram, as the gateway once counted them. */
function reference(): Registry {
  const registry = new Registry();
  const operations = new Counter({
    name: 'ops_total',
    help: 'operations',
    labelNames: ['operation', 'type', 'outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'd',
    help: 'durations',
    labelNames: ['type', 'outcome'],
    buckets: BUCKETS,
    registers: [registry],
  });
  for (const [operation, type, outcome, seconds] of observations) {
    operations.inc({ operation, type, outcome });
    duration.observe({ type, outcome }, seconds);
  }
  return registry;
}

function cheap(): Registry {
  const registry = new Registry();
  const operations = new PlainCounter(registry, { name: 'ops_total', help: 'operations' });
  const duration = new PlainHistogram(registry, { name: 'd', help: 'durations', buckets: BUCKETS });
  for (const [operation, type, outcome, seconds] of observations) {
    const countKey = `${operation} ${type} ${outcome}`;
    (operations.find(countKey) ?? operations.add(countKey, { operation, type, outcome })).value += 1;
    const durationKey = `${type} ${outcome}`;
    (duration.find(durationKey) ?? duration.add(durationKey, { type, outcome })).observe(seconds);
  }
  return registry;
}

describe('a counter and a histogram kept in plain numbers', () => {
  it('scrape to the same text as prom-client Counter and Histogram fed the same operations', async () => {
    const expected = await reference().metrics();
    expect(expected).toContain('ops_total{operation="Me",type="query",outcome="ok"} 3');
    expect(expected).toContain('d_bucket{le="0.005",type="query",outcome="ok"} 2');
    expect(await cheap().metrics()).toBe(expected);
  });

  it('give the same JSON as prom-client, and start again from zero on a reset', async () => {
    const registry = cheap();
    expect(await registry.getMetricsAsJSON()).toEqual(await reference().getMetricsAsJSON());
    registry.resetMetrics();
    expect(await registry.metrics()).toBe(
      '# HELP ops_total operations\n# TYPE ops_total counter\n\n# HELP d durations\n# TYPE d histogram\n',
    );
  });
});
