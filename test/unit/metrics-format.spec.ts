import { describe, expect, it } from 'vitest';
import { negotiatedContentType } from '../../src/metrics/metrics-format.js';
import { OPENMETRICS_TEXT, PROMETHEUS_ACCEPT, PROMETHEUS_TEXT } from '../support/metrics-text.js';

describe('negotiatedContentType', () => {
  it.each([
    ["Prometheus 3's default", PROMETHEUS_ACCEPT],
    [
      "Prometheus 2's default",
      'application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
    ],
    ['OpenMetrics alone', 'application/openmetrics-text'],
    [
      'OpenMetrics above text/plain',
      'text/plain;q=0.5, Application/OpenMetrics-Text; version=1.0.0',
    ],
    ['OpenMetrics above anything else', 'application/openmetrics-text, */*;q=0.1'],
  ])('answers OpenMetrics for %s', (_name, accept) => {
    expect(negotiatedContentType(accept)).toBe(OPENMETRICS_TEXT);
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['anything (curl)', '*/*'],
    ['a browser', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'],
    ['text/plain', 'text/plain'],
    ['text/*', 'text/*'],
    [
      'Prometheus told to prefer the text format',
      'text/plain;version=0.0.4;q=0.6,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.4',
    ],
    ['a tie', 'application/openmetrics-text, text/plain'],
    ['OpenMetrics refused', 'application/openmetrics-text;q=0, */*'],
    ['only what it does not serve', 'application/json'],
  ])('answers the Prometheus text format for %s', (_name, accept) => {
    expect(negotiatedContentType(accept)).toBe(PROMETHEUS_TEXT);
  });
});
