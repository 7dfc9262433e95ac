import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import { tracingInstalled, useTracingProvider } from './tracing.js';

/**
 * OpenTelemetry's SDK and OTLP exporter, in a module of their own: main.ts imports it only when an
 * OTLP endpoint is configured. Loaded by every start, they were about 0.1 s of it (docs/benchmarks.md,
 * "Footprint and start") for servers that export no traces; the hooks in tracing.ts need only the API.
 */
export interface TracingOptions {
  serviceName?: string;
  /** OTLP/HTTP traces URL (e.g. http://collector:4318/v1/traces). */
  otlpEndpoint?: string;
  /** For tests: spans go here, one by one, as they end. */
  exporter?: SpanExporter;
}

/** Registers the tracer provider, the W3C propagator and the async context manager. */
export function installTracing(options: TracingOptions): void {
  if (tracingInstalled()) return;
  const processors = [];
  if (options.exporter) processors.push(new SimpleSpanProcessor(options.exporter));
  if (options.otlpEndpoint)
    processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: options.otlpEndpoint })));
  if (processors.length === 0) return;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName ?? 'partner-gateway' }),
    spanProcessors: processors,
  });
  provider.register();
  useTracingProvider(provider);
}
