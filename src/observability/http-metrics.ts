import type { Registry } from 'prom-client';
import { HistogramSeries, type MetricValue, registerCounter, registerHistogram } from './plain-metrics.js';

/**
 * The HTTP request counter and duration histogram, kept in plain numbers per label set and shown
 * at a scrape through prom-client's registry, in the text its own Counter and Histogram write.
 * prom-client's metrics, bound children included, validate and hash the labels of every
 * observation: the pair cost about 1.5 µs per request, a few per cent of a cached REST read. A
 * series here is found once per request (one Map lookup) and counted with three additions.
 */
export class HttpMetrics {
  /** One series per label set. */
  private readonly series = new Map<string, HistogramSeries>();
  /**
   * The series of each route template, method and status seen: the per-request lookup. Nested maps
   * keyed by the strings the request already holds (their hashes are kept on them), rather than one
   * map keyed by a string joined per request, which had to be built and hashed every time.
   */
  private readonly byRoute = new Map<string, Map<string, Map<number, HistogramSeries>>>();

  constructor(
    registry: Registry,
    private readonly options: {
      requests: { name: string; help: string };
      duration: { name: string; help: string; buckets: number[] };
      labelsOf: (method: string, route: string, status: number) => Record<string, string>;
    },
  ) {
    const { requests, duration } = options;
    const all = () => [...this.series.values()];
    const reset = () => {
      this.series.clear();
      this.byRoute.clear();
    };
    const counts = () => all().map((s): MetricValue => ({ labels: { ...s.labels }, value: s.count }));
    registerCounter(registry, requests, counts, reset);
    registerHistogram(registry, duration, all, reset);
  }

  /** The series of one method, route template and status; made on first use (the set is bounded). */
  seriesFor(method: string, route: string, status: number): HistogramSeries {
    return this.byRoute.get(route)?.get(method)?.get(status) ?? this.firstSeriesFor(method, route, status);
  }

  private firstSeriesFor(method: string, route: string, status: number): HistogramSeries {
    // Statuses share a series when their labels are the same (200 and 204 are both 2xx): two
    // series with one label set would print duplicate samples, which Prometheus drops.
    const labels = this.options.labelsOf(method, route, status);
    const labelKey = JSON.stringify(labels);
    let found = this.series.get(labelKey);
    if (!found) {
      found = new HistogramSeries(labels, this.options.duration.buckets);
      this.series.set(labelKey, found);
    }
    let byMethod = this.byRoute.get(route);
    if (!byMethod) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    byStatus.set(status, found);
    return found;
  }
}
