import { Gauge, type LabelValues, type Registry } from 'prom-client';

/**
 * A gauge's values are read from the database at most this often, however often
 * /metrics is scraped (it is public): a scrape costs the database one read per gauge
 * every 5 s at most, whatever the scrapers do.
 */
const DATABASE_READ_TTL_MS = 5_000;

/** One value of a gauge, with its labels. */
export interface GaugeReading<Label extends string> {
  labels: LabelValues<Label>;
  value: number;
}

/**
 * A gauge whose values come from the database at scrape time, read at most every
 * DATABASE_READ_TTL_MS (scrapes in between show the last values); a database that does
 * not answer leaves the last values too, so a scrape never fails or waits longer than the
 * read's own statement time-out.
 */
export function databaseGauge<Label extends string = never>(
  registry: Registry,
  { name, help, labelNames = [] }: { name: string; help: string; labelNames?: readonly Label[] },
  read: () => Promise<GaugeReading<Label>[]>,
): Gauge<Label> {
  let readUntil = 0;
  return new Gauge<Label>({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      if (Date.now() < readUntil) return;
      readUntil = Date.now() + DATABASE_READ_TTL_MS;
      const readings = await read().catch(() => undefined);
      for (const { labels, value } of readings ?? []) this.set(labels, value);
    },
  });
}
