import { describe, expect, it } from 'vitest';
import {
  tracingRequested,
  unservedTracesExporters,
} from '../../src/common/tracing/tracing-switch.js';

describe('tracingRequested: the standard variables turn tracing on', () => {
  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: ' otlp , console' }, true],
  ])('%o: on', (env, expected) => {
    expect(tracingRequested(env)).toBe(expected);
  });

  it.each([
    [{}, false],
    // Passed through empty by compose files and ConfigMaps: off.
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_SAMPLER: '' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
    [{ OTEL_TRACES_EXPORTER: 'console' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }, false],
  ])('%o: off', (env, expected) => {
    expect(tracingRequested(env)).toBe(expected);
  });
});

describe('unservedTracesExporters: the names OTEL_TRACES_EXPORTER gives that are warned about and left out', () => {
  it.each([
    [{}, []],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, []],
    [{ OTEL_TRACES_EXPORTER: 'none' }, []],
    [{ OTEL_TRACES_EXPORTER: '' }, []],
    [{ OTEL_TRACES_EXPORTER: 'console' }, ['console']],
    [{ OTEL_TRACES_EXPORTER: ' otlp , console,zipkin' }, ['console', 'zipkin']],
    // Disabled: nothing of OpenTelemetry's is read, so nothing to warn about.
    [{ OTEL_TRACES_EXPORTER: 'console', OTEL_SDK_DISABLED: 'true' }, []],
  ])('%o: %o', (env, expected) => {
    expect(unservedTracesExporters(env)).toEqual(expected);
  });
});
