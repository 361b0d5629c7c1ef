import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { anchorsOf } from '../support/markdown-anchors.js';
import {
  alerts,
  alertTests,
  dashboardQueries,
  recordedSeries,
  ruleFiles,
  ruleTestFiles,
  RUNBOOKS,
  selectedSeries,
} from '../support/monitoring.js';
import { PROMTOOL, promtool } from '../support/promtool.js';

interface PrometheusConfig {
  global: { scrape_interval: string; evaluation_interval: string };
  rule_files: string[];
  scrape_configs: {
    job_name: string;
    dns_sd_configs: { names: string[]; type: string; port: number }[];
  }[];
}

/** promtool's unit tests evaluate three days of rules: tens of seconds on a busy machine. */
const RULE_TESTS_LIMIT_MS = 300_000;

describe.skipIf(!PROMTOOL)('deploy/monitoring, through promtool', () => {
  it('holds rule files promtool checks', () => {
    expect(promtool(['check', 'rules', ...ruleFiles()])).toMatch(/SUCCESS/);
  });

  it(
    "passes promtool's unit tests of the rules (deploy/monitoring/tests)",
    () => {
      const output = promtool(['test', 'rules', ...ruleTestFiles()]);
      expect(output.match(/SUCCESS/g)).toHaveLength(ruleTestFiles().length);
    },
    RULE_TESTS_LIMIT_MS,
  );

  it("has a dashboard whose every query promtool parses (as a recording rule's)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-dashboard-'));
    try {
      const file = join(dir, 'dashboard.rules.yml');
      const queries = dashboardQueries();
      const recorded = queries.map((expr, index) => ({ record: `dashboard:query_${index}`, expr }));
      writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules: recorded }] }));
      expect(promtool(['check', 'rules', file])).toContain(
        `SUCCESS: ${queries.length} rules found`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('deploy/monitoring alerts', () => {
  it.each(alerts().map((alert) => [alert.alert!, alert]))(
    '%s has a severity, a summary, a description and a runbook that exists',
    (_, alert) => {
      expect(['page', 'ticket']).toContain(alert.labels?.severity);
      expect(alert.annotations?.summary).toMatch(/\S/);
      expect(alert.annotations?.description).toMatch(/\S/);
      const [page, anchor] = alert.annotations!.runbook_url.split('#');
      expect(page).toBe(RUNBOOKS);
      expect([...anchorsOf(RUNBOOKS)]).toContain(anchor);
    },
  );

  it('each has a promtool test in which it fires, and one in which it stays quiet', () => {
    const tests = alertTests();
    const untested = alerts()
      .map(({ alert }) => alert!)
      .flatMap((name) => {
        const own = tests.filter(({ alertname }) => alertname === name);
        return [
          ...(own.some(({ exp_alerts }) => exp_alerts.length > 0) ? [] : [`${name}: never fires`]),
          ...(own.some(({ exp_alerts }) => exp_alerts.length === 0)
            ? []
            : [`${name}: never quiet`]),
        ];
      });
    expect(untested).toEqual([]);
  });

  it('each objective has a fast (page) and a slow (ticket) burn-rate alert', () => {
    const burns = alerts().filter(({ alert }) => alert!.includes('BudgetBurn'));
    const objectives = new Set(burns.map(({ labels }) => labels!.objective));
    expect([...objectives].sort()).toEqual([
      'availability',
      'create-latency',
      'read-latency',
      'webhook-delivery',
    ]);
    for (const objective of objectives) {
      expect(
        burns
          .filter(({ labels }) => labels!.objective === objective)
          .map(({ labels }) => labels!.severity)
          .sort(),
      ).toEqual(['page', 'ticket']);
    }
  });
});

describe('deploy/monitoring/plant-store-dashboard.json', () => {
  it('queries only PromQL the Prometheus grammar reads', () => {
    for (const expr of dashboardQueries()) expect(() => selectedSeries(expr)).not.toThrow();
  });

  it("reads the objectives from the rules' recorded series", () => {
    const recorded = dashboardQueries()
      .flatMap(selectedSeries)
      .filter((name) => name.startsWith('plant_store:'));
    expect(recorded.length).toBeGreaterThan(0);
    for (const name of recorded) expect(recordedSeries()).toContain(name);
  });
});

describe("docker-compose.yml's monitoring profile", () => {
  const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as {
    services: Record<
      string,
      {
        profiles?: string[];
        volumes?: string[];
        ports?: string[];
        image: string;
        expose?: string[];
      }
    >;
  };
  const { prometheus, api } = compose.services;
  const config = parse(
    readFileSync('deploy/monitoring/prometheus.yml', 'utf8'),
  ) as PrometheusConfig;

  it('runs Prometheus only with --profile monitoring, its API on loopback, with the rules', () => {
    expect(prometheus.profiles).toEqual(['monitoring']);
    expect(prometheus.image).toBe('prom/prometheus:v2.42.0');
    expect(prometheus.ports).toEqual(['127.0.0.1:${PROMETHEUS_PORT:-9090}:9090']);
    expect(prometheus.volumes).toEqual([
      './deploy/monitoring/prometheus.yml:/etc/prometheus/prometheus.yml:ro',
      './deploy/monitoring/rules:/etc/prometheus/rules:ro',
    ]);
    expect(config.rule_files).toEqual(['/etc/prometheus/rules/*.rules.yml']);
  });

  it("finds every api replica by the service's name in the network's DNS, as the job the rules select", () => {
    const [job] = config.scrape_configs;
    expect(job.job_name).toBe('plant-store');
    expect(job.dns_sd_configs).toEqual([
      expect.objectContaining({ names: ['api'], type: 'A', port: Number(api.expose![0]) }),
    ]);
  });

  it.skipIf(!PROMTOOL)(
    'is a configuration promtool checks, with the rules where it mounts them',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'plant-store-prometheus-'));
      try {
        const file = join(dir, 'prometheus.yml');
        const local = {
          ...config,
          rule_files: [join(process.cwd(), 'deploy/monitoring/rules/*.rules.yml')],
        };
        writeFileSync(file, stringify(local));
        expect(promtool(['check', 'config', file])).toMatch(/SUCCESS/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
