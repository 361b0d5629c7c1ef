import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { parse } from 'yaml';
import { ruleGroups } from '../../scripts/prometheus-rule.mjs';

export const RULES_DIR = 'deploy/monitoring/rules';
export const RULE_TESTS_DIR = 'deploy/monitoring/tests';
export const DASHBOARD = 'deploy/monitoring/plant-store-dashboard.json';
export const RUNBOOKS = 'docs/operations/runbooks.md';

export interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** Every rule of deploy/monitoring/rules, recordings and alerts. */
export const rules = (): Rule[] =>
  (ruleGroups() as { rules: Rule[] }[]).flatMap((group) => group.rules);

export const alerts = () => rules().filter((rule) => rule.alert !== undefined);

/** The series the rules record. */
export const recordedSeries = () =>
  new Set(rules().flatMap(({ record }) => (record === undefined ? [] : [record])));

export const ruleTestFiles = () =>
  readdirSync(RULE_TESTS_DIR)
    .filter((name) => name.endsWith('.test.yml'))
    .map((name) => join(RULE_TESTS_DIR, name));

export const ruleFiles = () =>
  readdirSync(RULES_DIR)
    .filter((name) => name.endsWith('.rules.yml'))
    .map((name) => join(RULES_DIR, name));

interface AlertTest {
  alertname: string;
  exp_alerts: unknown[];
}

/** promtool's alert tests, each with the alert it evaluates and what it expects. */
export const alertTests = (): AlertTest[] =>
  ruleTestFiles().flatMap((file) =>
    (
      parse(readFileSync(file, 'utf8')) as { tests: { alert_rule_test?: AlertTest[] }[] }
    ).tests.flatMap((test) => test.alert_rule_test ?? []),
  );

/**
 * The dashboard's queries, with Grafana's variables given the values Prometheus would get
 * ($__rate_interval: four scrape intervals at least; 5m here).
 */
export function dashboardQueries(): string[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: { targets?: { expr: string }[] }[];
  };
  return dashboard.panels
    .flatMap(({ targets }) => targets ?? [])
    .map(({ expr }) => expr.replaceAll('$__rate_interval', '5m'));
}

/**
 * The metric names `expr` selects, read by the PromQL grammar of the Prometheus project
 * (lezer-promql); throws where it finds a syntax error.
 */
export function selectedSeries(expr: string): string[] {
  const names: string[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) throw new Error(`not PromQL at ${node.from}: ${expr}`);
      if (node.name !== 'VectorSelector') return;
      const identifier = node.node.getChild('Identifier');
      const byName = /__name__\s*=\s*"([^"]+)"/.exec(expr.slice(node.from, node.to));
      const name = identifier ? expr.slice(identifier.from, identifier.to) : byName?.[1];
      if (!name) throw new Error(`a selector without a metric name: ${expr}`);
      names.push(name);
    },
  });
  return names;
}
