import { describe, expect, it } from 'vitest';
import { documentedOtelVariables, OTEL_VARIABLES } from '../support/otel-variables.js';

describe("docs/operations/observability.md's tracing variables", () => {
  it('are the OpenTelemetry variables the deployment files may set, each once', () => {
    const documented = documentedOtelVariables();
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...OTEL_VARIABLES].sort());
  });
});
