import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import {
  prometheusRuleManifest,
  PROMETHEUS_RULE,
  ruleGroups,
} from '../../scripts/prometheus-rule.mjs';
import { PROMTOOL, promtool } from '../support/promtool.js';
import { tracingRequested } from '../../src/common/tracing/tracing-switch.js';
import { CONFIG_VARIABLES } from '../../src/config/app-config.js';
import { OTEL_VARIABLES } from '../support/otel-variables.js';
import { PACKAGE_VERSION } from '../support/release.js';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, any>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

const KUBECTL = (() => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const scripts = (
  JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }
).scripts;
/** The drain after SIGTERM (src/shutdown): requests in flight get this long. */
const DRAIN_SECONDS = 10;
/** Then, with tracing on, the spans still queued get this long (src/common/tracing). */
const SPAN_FLUSH_SECONDS = 3;

/** `kubectl kustomize DIR`'s objects. */
const rendered = (dir: string) =>
  parseAllDocuments(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' })).map(
    (document) => document.toJS() as Manifest,
  );

/** Validates `manifest` against its kind's schema, the Prometheus Operator's ones included. */
async function validate(manifest: Manifest): Promise<void> {
  const [group, version] = manifest.apiVersion.includes('/')
    ? manifest.apiVersion.split('/')
    : ['', manifest.apiVersion];
  const models =
    group === 'monitoring.coreos.com'
      ? `@kubernetes-models/prometheus-operator/${group}`
      : `kubernetes-models${group ? `/${group}` : ''}`;
  const module = (await import(`${models}/${version}/${manifest.kind}`)) as Record<
    string,
    new (value: Manifest) => { validate(): void }
  >;
  expect(() => new module[manifest.kind](manifest).validate(), manifest.kind).not.toThrow();
}

// kubectl (with kustomize) is on the project's machines and in CI; elsewhere this is skipped.
describe.skipIf(!KUBECTL)('deploy/kubernetes (rendered with kubectl kustomize)', () => {
  const manifests = KUBECTL ? rendered('deploy/kubernetes') : [];
  const find = (kind: string) => manifests.find((manifest) => manifest.kind === kind)!;
  /** Every Secret's variables, as one. */
  const secrets = () =>
    Object.assign(
      {},
      ...manifests.filter(({ kind }) => kind === 'Secret').map(({ stringData }) => stringData),
    ) as Record<string, string>;

  it('holds every object the deployment needs, each valid against the Kubernetes schemas', async () => {
    expect(manifests.map(({ kind }) => kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'Job',
      'PodDisruptionBudget',
      'Secret',
      'Secret',
      'Service',
    ]);
    for (const manifest of manifests) await validate(manifest);
  });

  it('runs the API with start:prod and the migrations with migration:run', () => {
    const [api] = find('Deployment').spec!.template.spec.containers;
    expect(['exec', ...api.command].join(' ')).toBe(scripts['start:prod']);
    const [migrate] = find('Job').spec!.template.spec.containers;
    expect(migrate.command.join(' ')).toBe(scripts['migration:run']);
    expect(migrate.image).toBe(api.image);
  });

  it('probes readiness and liveness on their own routes, and drains (and sends its last spans) within the grace period', () => {
    const pod = find('Deployment').spec!.template.spec;
    const [api] = pod.containers;
    expect(api.readinessProbe.httpGet.path).toBe('/health/ready');
    expect(api.livenessProbe.httpGet.path).toBe('/health/live');
    expect(api.startupProbe.httpGet.path).toBe('/health/live');
    const shutdownDelaySeconds = Number(find('ConfigMap').data!.SHUTDOWN_DELAY_MS) / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(
      api.lifecycle.preStop.sleep.seconds +
        shutdownDelaySeconds +
        DRAIN_SECONDS +
        SPAN_FLUSH_SECONDS,
    );
  });

  it('rolls out without a ready pod less: each new pod ready, for longer than readiness takes to fail, before an old one stops', () => {
    const { spec } = find('Deployment');
    expect(spec!.strategy.type).toBe('RollingUpdate');
    expect(spec!.strategy.rollingUpdate.maxUnavailable).toBe(0);
    expect(spec!.strategy.rollingUpdate.maxSurge).toBeGreaterThanOrEqual(1);
    const [api] = spec!.template.spec.containers;
    const readinessFailsWithinSeconds =
      api.readinessProbe.periodSeconds * api.readinessProbe.failureThreshold;
    expect(spec!.minReadySeconds).toBeGreaterThanOrEqual(readinessFailsWithinSeconds);
    // A stopping pod serves on while its endpoint is removed everywhere.
    const shutdownDelaySeconds = Number(find('ConfigMap').data!.SHUTDOWN_DELAY_MS) / 1000;
    expect(api.lifecycle.preStop.sleep.seconds + shutdownDelaySeconds).toBeGreaterThanOrEqual(
      readinessFailsWithinSeconds,
    );
  });

  it('leaves the migrations to the Job, which applies alone (by its label) before the image changes', () => {
    const [api] = find('Deployment').spec!.template.spec.containers;
    expect(api.envFrom).toContainEqual({ configMapRef: { name: find('ConfigMap').metadata.name } });
    expect(find('ConfigMap').data!.MIGRATIONS_AT_START).toBe('false');
    expect(api.env ?? []).not.toContainEqual(
      expect.objectContaining({ name: 'MIGRATIONS_AT_START' }),
    );
    const migrationOnly = manifests.filter(
      ({ metadata }) => metadata.labels?.['app.kubernetes.io/component'] === 'migration',
    );
    expect(migrationOnly.map(({ kind }) => kind)).toEqual(['Job']);
  });

  it("runs package.json's release: the API and the migration Job on one image, tagged with its version", () => {
    const images = ['Deployment', 'Job'].map(
      (kind) => find(kind).spec!.template.spec.containers[0].image,
    );
    expect(images).toEqual([`plant-store:${PACKAGE_VERSION}`, `plant-store:${PACKAGE_VERSION}`]);
  });

  it('sets only variables the service reads: its own, and the OpenTelemetry ones it honours', () => {
    const variables = [...Object.keys(find('ConfigMap').data!), ...Object.keys(secrets())];
    for (const name of variables) expect([...CONFIG_VARIABLES, ...OTEL_VARIABLES]).toContain(name);
  });

  it("gives the owner's URL (DATABASE_MIGRATION_URL) to the migration Job alone, the API the service's role", () => {
    const secretNames = (kind: string) =>
      find(kind)
        .spec!.template.spec.containers[0].envFrom.flatMap(
          ({ secretRef }: { secretRef?: { name: string } }) => (secretRef ? [secretRef.name] : []),
        )
        .sort();
    const owning = manifests
      .filter(({ kind, stringData }) => kind === 'Secret' && stringData?.DATABASE_MIGRATION_URL)
      .map(({ metadata }) => metadata.name);
    expect(owning).toHaveLength(1);
    expect(secretNames('Job')).toContain(owning[0]);
    expect(secretNames('Deployment')).not.toContain(owning[0]);
    const role = (url: string) => new URL(url).username;
    expect(role(secrets().DATABASE_URL)).not.toBe(role(secrets().DATABASE_MIGRATION_URL));
  });

  it('leaves tracing off until an operator sets its endpoint', () => {
    expect(tracingRequested({ ...find('ConfigMap').data, ...secrets() })).toBe(false);
  });

  it('routes the Service and the disruption budget to the API pods only, not the migration', () => {
    const apiLabels = find('Deployment').spec!.template.metadata.labels;
    expect(apiLabels).toMatchObject(find('Service').spec!.selector);
    expect(apiLabels).toMatchObject(find('PodDisruptionBudget').spec!.selector.matchLabels);
    const migrationLabels = find('Job').spec!.template.metadata.labels;
    expect(migrationLabels).not.toMatchObject(find('Service').spec!.selector);
  });
});

describe.skipIf(!KUBECTL)(
  'deploy/kubernetes/monitoring, the component an overlay adds (kubectl kustomize)',
  () => {
    // An operator's overlay: the base and the component, from a folder of its own.
    const overlay = mkdtempSync(join(tmpdir(), 'plant-store-overlay-'));
    const fromOverlay = (path: string) => relative(overlay, resolve(path));
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      stringify({
        resources: [fromOverlay('deploy/kubernetes')],
        components: [fromOverlay('deploy/kubernetes/monitoring')],
      }),
    );
    const manifests = KUBECTL ? rendered(overlay) : [];
    const find = (kind: string) => manifests.find((manifest) => manifest.kind === kind)!;
    afterAll(() => rmSync(overlay, { recursive: true, force: true }));

    it('adds a ServiceMonitor and a PrometheusRule to the base, each valid against its schema', async () => {
      const base = new Set(rendered('deploy/kubernetes').map(({ kind }) => kind));
      expect(manifests.map(({ kind }) => kind).filter((kind) => !base.has(kind))).toEqual([
        'PrometheusRule',
        'ServiceMonitor',
      ]);
      for (const manifest of manifests) await validate(manifest);
    });

    it("scrapes the Service's port by name, and names the job as the rules select it", () => {
      const monitor = find('ServiceMonitor').spec!;
      const service = find('Service');
      expect(service.metadata.labels).toMatchObject(monitor.selector.matchLabels);
      const [endpoint] = monitor.endpoints;
      expect(service.spec!.ports.map(({ name }: { name: string }) => name)).toContain(
        endpoint.port,
      );
      expect(endpoint.path).toBe('/metrics');
      expect(service.metadata.labels![monitor.jobLabel]).toBe('plant-store');
      const selectors = JSON.stringify(ruleGroups()).match(/job=\\"[^\\"]*\\"/g);
      expect(new Set(selectors)).toEqual(new Set(['job=\\"plant-store\\"']));
    });

    it(`holds deploy/monitoring's rule groups as they are (${PROMETHEUS_RULE}, written by npm run monitoring:kubernetes)`, () => {
      expect(readFileSync(PROMETHEUS_RULE, 'utf8')).toBe(prometheusRuleManifest());
      expect(find('PrometheusRule').spec!.groups).toEqual(ruleGroups());
    });

    it.skipIf(!PROMTOOL)('holds groups promtool checks, as Prometheus loads them', () => {
      const dir = mkdtempSync(join(tmpdir(), 'plant-store-rules-'));
      try {
        const file = join(dir, 'prometheus-rule.rules.yml');
        writeFileSync(file, stringify({ groups: find('PrometheusRule').spec!.groups }));
        expect(promtool(['check', 'rules', file])).toMatch(/SUCCESS: \d+ rules found/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);
