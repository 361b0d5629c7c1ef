/**
 * The Accept header of Prometheus 3 with its default scrape protocols: OpenMetrics first,
 * then the Prometheus text format.
 */
export const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2';

export const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';
export const OPENMETRICS_TEXT = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** The HELP and TYPE lines of a scrape: its metric families, named and typed. */
export function families(text: string): string[] {
  return text.split('\n').filter((line) => line.startsWith('# HELP') || line.startsWith('# TYPE'));
}

export type MetricsFormat = 'prometheus' | 'openmetrics';

/** How the samples of a family are named after it, by format and type. */
const SAMPLE_SUFFIXES: Record<MetricsFormat, Record<string, string[]>> = {
  prometheus: { counter: [''], gauge: [''], histogram: ['_bucket', '_sum', '_count'] },
  openmetrics: { counter: ['_total'], gauge: [''], histogram: ['_bucket', '_sum', '_count'] },
};

/**
 * The sample lines not named after the family above them as `format` names samples (a
 * counter's `X_total` is of family `X_total` in the Prometheus text, `X` in OpenMetrics):
 * none, in a well-formed scrape.
 */
export function misnamedSamples(text: string, format: MetricsFormat): string[] {
  let family: { name: string; suffixes: string[] } | undefined;
  const misnamed: string[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) family = { name: type[1], suffixes: SAMPLE_SUFFIXES[format][type[2]] ?? [] };
    if (line === '' || line.startsWith('#')) continue;
    const name = /^[^{ ]+/.exec(line)![0];
    if (!family?.suffixes.some((suffix) => name === family!.name + suffix)) misnamed.push(line);
  }
  return misnamed;
}

export interface Exemplar {
  /** The sample it is attached to: name and labels. */
  series: string;
  labels: Record<string, string>;
  value: number;
  /** Seconds since the epoch. */
  timestamp: number;
}

/** The exemplars of an OpenMetrics scrape: `series value # {labels} value timestamp`. */
export function exemplars(text: string): Exemplar[] {
  return [...text.matchAll(/^(\S+) \S+ # \{([^}]*)\} (\S+) (\S+)$/gm)].map(
    ([, series, labels, value, timestamp]) => ({
      series,
      labels: Object.fromEntries(
        [...labels.matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]),
      ),
      value: Number(value),
      timestamp: Number(timestamp),
    }),
  );
}
