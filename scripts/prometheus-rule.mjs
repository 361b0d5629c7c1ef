// `npm run monitoring:kubernetes`: writes deploy/kubernetes/monitoring/prometheus-rule.yaml,
// the Prometheus Operator's PrometheusRule holding the groups of deploy/monitoring/rules/,
// so that Kubernetes gets the rules the compose stack and promtool's tests have. A unit
// test (test/deploy/kubernetes.spec.ts) fails while the two differ.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const RULES_DIR = 'deploy/monitoring/rules';
export const PROMETHEUS_RULE = 'deploy/kubernetes/monitoring/prometheus-rule.yaml';

/** The groups of every rule file, in file order. */
export function ruleGroups() {
  return readdirSync(join(ROOT, RULES_DIR))
    .filter((name) => name.endsWith('.rules.yml'))
    .sort()
    .flatMap((name) => parse(readFileSync(join(ROOT, RULES_DIR, name), 'utf8')).groups);
}

/** The PrometheusRule manifest, as written to PROMETHEUS_RULE. */
export function prometheusRuleManifest() {
  const manifest = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'plant-store' },
    spec: { groups: ruleGroups() },
  };
  return [
    `# Written by \`npm run monitoring:kubernetes\` from ${RULES_DIR}/*.rules.yml: edit those.`,
    stringify(manifest, { lineWidth: 0, blockQuote: 'literal' }),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(join(ROOT, PROMETHEUS_RULE), prometheusRuleManifest());
  console.log(`wrote ${PROMETHEUS_RULE}`);
}
