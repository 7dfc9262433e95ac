import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HttpMetrics } from '../../src/observability/http-metrics.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LABELS = ['method', 'route', 'status_class'] as const;
const observations: Array<[string, string, number, number]> = [
  ['GET', '/api/v1/user/me', 200, 0.0012],
  ['GET', '/api/v1/user/me', 200, 0.005],
  ['GET', '/api/v1/user/me', 200, 0.0051],
  ['POST', '/graphql', 200, 0.3],
  ['GET', '/api/v1/user/me', 401, 0.002],
  // Another status of the same class on the same route: one series with 401's, as prom-client keeps it.
  ['GET', '/api/v1/user/me', 404, 0.003],
  ['POST', '/graphql', 500, 12],
  ['GET', '/api/v1/user/me', 200, 10],
];
const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;

/** The same observations through prom-client's own Counter and Histogram. */
function reference(): Registry {
  const registry = new Registry();
  const requests = new Counter({ name: 'r_total', help: 'requests', labelNames: LABELS, registers: [registry] });
  const duration = new Histogram({
    name: 'd',
    help: 'durations',
    labelNames: LABELS,
    buckets: BUCKETS,
    registers: [registry],
  });
  for (const [method, route, status, seconds] of observations) {
    const labels = { method, route, status_class: statusClass(status) };
    requests.labels(labels).inc();
    duration.labels(labels).observe(seconds);
  }
  return registry;
}

function cheap(): Registry {
  const registry = new Registry();
  const metrics = new HttpMetrics(registry, {
    requests: { name: 'r_total', help: 'requests' },
    duration: { name: 'd', help: 'durations', buckets: BUCKETS },
    labelsOf: (method, route, status) => ({ method, route, status_class: statusClass(status) }),
  });
  for (const [method, route, status, seconds] of observations)
    metrics.seriesFor(method, route, status).observe(seconds);
  return registry;
}

describe('HTTP metrics kept in plain numbers', () => {
  it('scrape to the same text as prom-client Counter and Histogram fed the same requests', async () => {
    const expected = await reference().metrics();
    expect(expected).toContain('d_bucket{le="0.005",method="GET",route="/api/v1/user/me",status_class="2xx"} 2');
    expect(await cheap().metrics()).toBe(expected);
  });

  it('give the same JSON as prom-client, and start again from zero on a reset', async () => {
    const registry = cheap();
    expect(await registry.getMetricsAsJSON()).toEqual(await reference().getMetricsAsJSON());
    registry.resetMetrics();
    expect(await registry.metrics()).toBe(
      '# HELP r_total requests\n# TYPE r_total counter\n\n# HELP d durations\n# TYPE d histogram\n',
    );
  });
});
