import type { FastifyInstance } from 'fastify';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';

export type Labels = Record<string, string>;
export interface Sample {
  name: string;
  labels: Labels;
  value: number;
}

/**
 * /metrics as Prometheus reads it: the text must parse with a text-format parser (families, types,
 * help); series values are read from the sample lines, labels as written.
 */
export class MetricsText {
  private constructor(
    readonly families: PrometheusFamily[],
    readonly samples: Sample[],
  ) {}

  static parse(text: string): MetricsText {
    const samples = text
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => {
        const match = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/);
        if (!match) throw new Error(`not a sample line: ${line}`);
        const labels = Object.fromEntries(
          [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]),
        );
        return { name: match[1]!, labels, value: Number(match[3]) };
      });
    return new MetricsText(parsePrometheusTextFormat(text), samples);
  }

  /** GET /metrics of an app that serves it on its own port (outside production, no token). */
  static async of(app: FastifyInstance): Promise<MetricsText> {
    const response = await app.inject({ url: '/metrics' });
    if (response.statusCode !== 200) throw new Error(`/metrics answered ${response.statusCode}`);
    return MetricsText.parse(response.body);
  }

  /** The series of a family whose labels include `labels`. */
  series(name: string, labels: Labels = {}): Sample[] {
    if (!this.families.some((f) => f.name === name)) throw new Error(`no metric family ${name}`);
    return this.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  }

  /** The sum of a family's series whose labels include `labels` (0 when there is none). */
  sum(name: string, labels: Labels = {}): number {
    return this.series(name, labels).reduce((total, s) => total + s.value, 0);
  }
}
