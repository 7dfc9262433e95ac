import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shutdownTracing } from '../../src/observability/tracing.js';
import { installTracing } from '../../src/observability/tracing-sdk.js';
import { FakeFlutterwave } from '../fakes/flutterwave.js';
import { startTestApp, type StartedTestApp } from '../helpers/app.js';

/**
 * One trace from a partner's `traceparent` through the HTTP request, the GraphQL operation, its
 * SQL and a provider call, to the `traceparent` the provider receives.
 */
describe('traces', () => {
  const exporter = new InMemorySpanExporter();
  let flw: FakeFlutterwave;
  let s: StartedTestApp;
  beforeAll(async () => {
    installTracing({ exporter });
    flw = await new FakeFlutterwave().start();
    s = await startTestApp({
      config: {
        FLUTTERWAVE_V3_SECRET_KEY: flw.v3SecretKey,
        FLUTTERWAVE_V3_BASE_URL: `${flw.url}/v3`,
        FLUTTERWAVE_SECRET_HASH: flw.secretHash,
      },
    });
  });
  afterAll(async () => {
    await s.t.close();
    await flw.stop();
    await shutdownTracing();
  });

  it('follow an incoming traceparent through GraphQL, SQL and a provider call to the outgoing traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpanId = '00f067aa0ba902b7';
    exporter.reset();
    const response = await s.t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: {
        'content-type': 'application/json',
        'x-api-key': s.tenant.productionKey,
        traceparent: `00-${traceId}-${callerSpanId}-01`,
      },
      payload: { query: 'query BillCatalogue { billCategories { code } }' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().errors).toBeUndefined();

    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(3);
    for (const span of spans) expect(span.spanContext().traceId).toBe(traceId);

    const server = spans.find((span) => span.name === 'POST /graphql')!;
    expect(server.parentSpanContext?.spanId).toBe(callerSpanId);
    expect(server.attributes['http.response.status_code']).toBe(200);
    const childOfServer = (span: { parentSpanContext?: { spanId: string } }) =>
      span.parentSpanContext?.spanId === server.spanContext().spanId;

    const operation = spans.find((span) => span.name === 'graphql.query BillCatalogue');
    expect(operation && childOfServer(operation)).toBe(true);

    const statements = spans.filter((span) => span.attributes['db.system.name'] !== undefined);
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      // Named by verb and table, never by text with values or by parameters.
      expect(statement.name).toMatch(/^(select|insert|update|delete|with|begin|commit|sql)( [a-z_]+)?$/);
      expect(Object.keys(statement.attributes).sort()).toEqual(['db.query.summary', 'db.system.name']);
    }
    expect(statements.map((span) => span.name)).toContain('select api_keys');

    const providerCall = spans.find((span) => span.attributes['server.address'] === new URL(flw.url).host)!;
    expect(providerCall).toBeDefined();
    expect(childOfServer(providerCall)).toBe(true);
    const received = flw.requests.at(-1)!;
    expect(received.path).toMatch(/^\/v3\/(top-)?bill-categories/);
    expect(received.headers['traceparent']).toBe(`00-${traceId}-${providerCall.spanContext().spanId}-01`);
  });
});
