import type { Registry } from 'prom-client';

/**
 * A counter and a histogram kept in plain numbers, one series per label set, shown at a scrape
 * through prom-client's registry in the text (and JSON) its own Counter and Histogram write.
 * prom-client validates and hashes the labels of every observation, bound children included; here
 * the caller finds its series once per observation (one Map lookup by a key it makes) and counts
 * with a few additions. Built for metrics observed on every request (GraphQL operations).
 */

/** What prom-client's registry reads from a metric at a scrape. */
export interface MetricValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
  exemplar?: null;
}

export class CounterSeries {
  value = 0;
  constructor(readonly labels: Readonly<Record<string, string>>) {}
}

export class HistogramSeries {
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
 * Series by a key the caller makes, one per label set (the key must not tell apart two series
 * with the same labels: both would be printed, and Prometheus drops duplicate samples).
 */
class SeriesMap<S> {
  private readonly series = new Map<string, S>();

  constructor(private readonly make: (labels: Record<string, string>) => S) {}

  find(key: string): S | undefined {
    return this.series.get(key);
  }

  add(key: string, labels: Record<string, string>): S {
    const made = this.make(labels);
    this.series.set(key, made);
    return made;
  }

  all(): S[] {
    return [...this.series.values()];
  }

  clear(): void {
    this.series.clear();
  }
}

/** Registers a counter whose samples `values` gives at a scrape. */
export function registerCounter(
  registry: Registry,
  { name, help }: { name: string; help: string },
  values: () => MetricValue[],
  reset: () => void,
): void {
  const metric = { name, help, type: 'counter', aggregator: 'sum' } as const;
  registry.registerMetric({ ...metric, get: async () => ({ ...metric, values: values() }), reset } as never);
}

/**
 * Registers a histogram over the series `all` gives at a scrape, written as prom-client's own
 * Histogram writes it: cumulative `le` buckets, `+Inf`, `_sum` and `_count` per label set.
 */
export function registerHistogram(
  registry: Registry,
  { name, help, buckets }: { name: string; help: string; buckets: readonly number[] },
  all: () => HistogramSeries[],
  reset: () => void,
): void {
  const values = (): MetricValue[] =>
    all().flatMap((s) => {
      let cumulative = 0;
      const bucket = (le: number | string, value: number): MetricValue => ({
        labels: { le },
        sharedLabels: s.labels,
        value,
        metricName: `${name}_bucket`,
        exemplar: null,
      });
      return [
        ...buckets.map((le, i) => bucket(le, (cumulative += s.perBucket[i]!))),
        bucket('+Inf', s.count),
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${name}_sum` },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${name}_count` },
      ];
    });
  const metric = { name, help, type: 'histogram', aggregator: 'sum' } as const;
  registry.registerMetric({
    ...metric,
    getForPromString: async () => ({ ...metric, values: values() }),
    // The JSON form names every label on the value itself, as prom-client's Histogram does.
    get: async () => ({
      ...metric,
      values: values().map(({ labels, sharedLabels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    }),
    reset,
  } as never);
}

export class PlainCounter {
  private readonly series = new SeriesMap((labels) => new CounterSeries(labels));

  constructor(registry: Registry, metric: { name: string; help: string }) {
    const values = () => this.series.all().map((s): MetricValue => ({ value: s.value, labels: { ...s.labels } }));
    registerCounter(registry, metric, values, () => this.series.clear());
  }

  /** The series `key` names (see SeriesMap), if it was added. */
  find(key: string): CounterSeries | undefined {
    return this.series.find(key);
  }

  /** A new series: `key` names its label set (see SeriesMap). */
  add(key: string, labels: Record<string, string>): CounterSeries {
    return this.series.add(key, labels);
  }
}

export class PlainHistogram {
  private readonly series: SeriesMap<HistogramSeries>;

  constructor(registry: Registry, metric: { name: string; help: string; buckets: number[] }) {
    this.series = new SeriesMap((labels) => new HistogramSeries(labels, metric.buckets));
    registerHistogram(
      registry,
      metric,
      () => this.series.all(),
      () => this.series.clear(),
    );
  }

  /** The series `key` names (see SeriesMap), if it was added. */
  find(key: string): HistogramSeries | undefined {
    return this.series.find(key);
  }

  /** A new series: `key` names its label set (see SeriesMap). */
  add(key: string, labels: Record<string, string>): HistogramSeries {
    return this.series.add(key, labels);
  }
}
