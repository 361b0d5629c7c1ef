import { Registry, type RegistryContentType } from 'prom-client';

interface MediaRange {
  type: string;
  subtype: string;
  quality: number;
}

/**
 * The format a scrape's Accept header asks for: OpenMetrics when it rates
 * `application/openmetrics-text` above the Prometheus text format, as Prometheus's own
 * header does; the Prometheus text format otherwise, as /metrics answered before: without
 * the header, for one that accepts anything (curl's, a browser's), on a tie. Versions are
 * not told apart: each format is served in the one version prom-client writes.
 */
export function negotiatedContentType(accept: string | undefined): RegistryContentType {
  if (!accept) return Registry.PROMETHEUS_CONTENT_TYPE;
  const ranges = accept.split(',').map(mediaRange);
  return quality(ranges, 'application', 'openmetrics-text') > quality(ranges, 'text', 'plain')
    ? Registry.OPENMETRICS_CONTENT_TYPE
    : Registry.PROMETHEUS_CONTENT_TYPE;
}

function mediaRange(text: string): MediaRange {
  const [mediaType, ...parameters] = text.split(';');
  const [type = '', subtype = ''] = mediaType.trim().toLowerCase().split('/');
  const weight = parameters.map((parameter) => parameter.trim()).find((p) => /^q=/i.test(p));
  return { type, subtype, quality: weight === undefined ? 1 : Number(weight.slice(2)) || 0 };
}

/**
 * The quality the header gives a media type: that of the most specific range matching it
 * (RFC 9110, 12.5.1), the highest of those equally specific; 0 when none does.
 */
function quality(ranges: MediaRange[], type: string, subtype: string): number {
  let bestSpecificity = -1;
  let best = 0;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype
        ? 2
        : range.type === type && range.subtype === '*'
          ? 1
          : range.type === '*' && range.subtype === '*'
            ? 0
            : -1;
    if (specificity < 0 || specificity < bestSpecificity) continue;
    best = specificity > bestSpecificity ? range.quality : Math.max(best, range.quality);
    bestSpecificity = specificity;
  }
  return best;
}
