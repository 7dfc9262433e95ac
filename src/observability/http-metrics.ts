import type { Registry } from 'prom-client';

/** What prom-client's registry reads from a metric at a scrape (its Counter and Histogram give the same). */
interface MetricValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
  exemplar?: null;
}

/** One label set (method, route template, status class): its request count, duration sum and buckets. */
export class HttpSeries {
  count = 0;
  sum = 0;
  /** Observations per bucket, not cumulative; the last slot is above every bound (+Inf only). */
  readonly perBucket: number[];

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.perBucket = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(seconds: number): void {
    this.count += 1;
    this.sum += seconds;
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++;
    this.perBucket[i]! += 1;
  }
}

/**
 * The HTTP request counter and duration histogram, kept in plain numbers per label set and shown
 * at a scrape through prom-client's registry, in the text its own Counter and Histogram write.
 * prom-client's metrics, bound children included, validate and hash the labels of every
 * observation: the pair cost about 1.5 µs per request, a few per cent of a cached REST read. A
 * series here is found once per request (one Map lookup) and counted with three additions.
 */
export class HttpMetrics {
  /** One series per label set. */
  private readonly series = new Map<string, HttpSeries>();
  /** The series of each status, method and route seen: the per-request lookup. */
  private readonly byStatus = new Map<string, HttpSeries>();

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
      this.byStatus.clear();
    };
    registry.registerMetric({
      name: requests.name,
      help: requests.help,
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({
        name: requests.name,
        help: requests.help,
        type: 'counter',
        aggregator: 'sum',
        values: all().map((s): MetricValue => ({ labels: { ...s.labels }, value: s.count })),
      }),
      reset,
    } as never);
    const histogramValues = (): MetricValue[] =>
      all().flatMap((s) => {
        let cumulative = 0;
        const bucket = (le: number | string, value: number): MetricValue => ({
          labels: { le },
          sharedLabels: s.labels,
          value,
          metricName: `${duration.name}_bucket`,
          exemplar: null,
        });
        return [
          ...duration.buckets.map((le, i) => bucket(le, (cumulative += s.perBucket[i]!))),
          bucket('+Inf', s.count),
          { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${duration.name}_sum` },
          { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${duration.name}_count` },
        ];
      });
    const histogram = { name: duration.name, help: duration.help, type: 'histogram', aggregator: 'sum' } as const;
    registry.registerMetric({
      ...histogram,
      getForPromString: async () => ({ ...histogram, values: histogramValues() }),
      // The JSON form names every label on the value itself, as prom-client's Histogram does.
      get: async () => ({
        ...histogram,
        values: histogramValues().map(({ labels, sharedLabels, ...rest }) => ({
          ...rest,
          labels: { ...labels, ...sharedLabels },
        })),
      }),
      reset,
    } as never);
  }

  /** The series of one method, route template and status; made on first use (the set is bounded). */
  seriesFor(method: string, route: string, status: number): HttpSeries {
    const key = `${status} ${method} ${route}`;
    let found = this.byStatus.get(key);
    if (!found) {
      // Statuses share a series when their labels are the same (200 and 204 are both 2xx): two
      // series with one label set would print duplicate samples, which Prometheus drops.
      const labels = this.options.labelsOf(method, route, status);
      const labelKey = JSON.stringify(labels);
      found = this.series.get(labelKey);
      if (!found) {
        found = new HttpSeries(labels, this.options.duration.buckets);
        this.series.set(labelKey, found);
      }
      this.byStatus.set(key, found);
    }
    return found;
  }
}
