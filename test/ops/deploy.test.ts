// deploy/ against the code: Kubernetes manifests (probes, grace period, config, secrets,
// autoscaling) and every metric name in the alert rules and the Grafana dashboard.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { parseConfig } from '@sluice/config';
import { SERVICE_NODE_FLAGS, serviceNodeArgs, type ServiceName } from '@sluice/service-kit';
import { envVarsReadByConfig, exportedMetricNames, metricsInPromQL, portVars, ROOT, SERVICES } from './code-facts.ts';
import { secretsOutsideSecrets } from './secret-placement.ts';

type Doc = {
  kind: string;
  metadata: { name: string };
  spec: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
};
const docs: Doc[] = readdirSync(join(ROOT, 'deploy/kubernetes'))
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) =>
    parseAllDocuments(readFileSync(join(ROOT, 'deploy/kubernetes', f), 'utf8')).map((d) => d.toJS() as Doc),
  )
  .filter(Boolean);
const of = (kind: string) => docs.filter((d) => d.kind === kind);
const configMap = of('ConfigMap').find((d) => d.metadata.name === 'sluice-config')!;
const configText = configMap.data!['sluice.yaml']!;

/** `{ env: NAME }` secrets the config reads. */
function secretEnvNames(node: unknown, out = new Set<string>()): Set<string> {
  if (node && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    if (Object.keys(record).length === 1 && typeof record.env === 'string') out.add(record.env);
    for (const value of Object.values(record)) secretEnvNames(value, out);
  }
  return out;
}

/** The process environment of a service's container: its Secret's values, and the plain values (placeholders). */
function containerEnv(name: string): NodeJS.ProcessEnv {
  const deployment = of('Deployment').find((d) => d.metadata.name === `sluice-${name}`)!;
  const env: NodeJS.ProcessEnv = {};
  for (const e of deployment.spec.template.spec.containers[0].env) {
    const ref = e.valueFrom?.secretKeyRef;
    env[e.name] = ref ? of('Secret').find((d) => d.metadata.name === ref.name)?.stringData?.[ref.key] : e.value;
  }
  return env;
}

/** The `{ env }` secrets each service itself reads (docs/operations.md, "Secrets per service"). */
const OWN_SECRETS: Record<string, string[]> = {
  ingest: ['SLUICE_ADMIN_TOKEN', 'SLUICE_DEMO_WRITE_KEY'],
  deliverer: ['SLUICE_DEMO_SHARED_SECRET'],
  retry: [],
  'audience-sync': ['SLUICE_ADMIN_TOKEN'],
  'delivery-log': ['SLUICE_DELIVERY_LOG_TOKEN', 'DATABASE_URL'],
};

test('the manifests hold no secret outside a Secret; the check finds one put anywhere else', () => {
  assert.deepEqual(secretsOutsideSecrets(docs), []);
  const leaky = structuredClone(docs);
  const cm = leaky.find((d) => d.kind === 'ConfigMap' && d.metadata.name === 'sluice-config')!;
  cm.data!['sluice.yaml'] = configText
    .replace('url: https://hooks.example.com/sluice', 'url: https://u:pw@hooks.example.com/sluice?token=t')
    .replace(/sharedSecret:\n\s+env: SLUICE_DEMO_SHARED_SECRET/, 'sharedSecret: in-clear-shared-secret');
  const deliverer = leaky.find((d) => d.kind === 'Deployment' && d.metadata.name === 'sluice-deliverer')!;
  deliverer.spec.template.spec.containers[0].env.push({ name: 'HOOK_AUTH', value: 'Bearer abc' });
  deliverer.spec.template.spec.containers[0].env.push({
    name: 'NOTE',
    value: 'change-me-admin-token-of-32-characters-or-more',
  });
  assert.deepEqual(secretsOutsideSecrets(leaky), [
    'ConfigMap/sluice-config: sluice.yaml destinations[0].settings.sharedSecret written in clear',
    'ConfigMap/sluice-config: sluice.yaml destinations[0].settings.webhooks[0].url written in clear',
    'Deployment/sluice-deliverer: env HOOK_AUTH is a plain value, not from a Secret',
    'Deployment/sluice-deliverer: holds the value of a Secret',
  ]);
});

test('the ConfigMap holds a config every service validates with its own Secret and the placeholders', () => {
  const raw = parse(configText);
  const secrets = secretEnvNames(raw);
  assert.ok(secrets.size > 0);
  for (const name of Object.keys(SERVICES)) {
    const env = containerEnv(name);
    for (const secret of secrets) assert.ok(env[secret], `${name} sets ${secret}`);
    parseConfig(raw, env);
  }
});

test('one Deployment and one Service per service: command, env, ports, probes, grace period, config mount', () => {
  const known = envVarsReadByConfig();
  const secrets = secretEnvNames(parse(configText));
  const ports = portVars();
  for (const [name, portVar] of Object.entries(SERVICES)) {
    const deployment = of('Deployment').find((d) => d.metadata.name === `sluice-${name}`);
    assert.ok(deployment, `Deployment sluice-${name}`);
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    assert.deepEqual(container.command, ['node', ...serviceNodeArgs(name as ServiceName)]);
    const env = new Map<string, any>(container.env.map((e: any) => [e.name, e]));
    for (const envName of env.keys())
      assert.ok(known.has(envName) || secrets.has(envName), `${name}: ${envName} is read by the code or the config`);
    for (const envName of secrets) {
      const ref = env.get(envName)?.valueFrom?.secretKeyRef;
      if (OWN_SECRETS[name]!.includes(envName))
        assert.equal(ref?.name, `sluice-${name}`, `${name}: ${envName} from its own Secret`);
      else
        assert.ok(
          !ref && /^whsec_/.test(env.get(envName)?.value),
          `${name}: ${envName} is a placeholder, not another's secret`,
        );
    }
    const port = Number(env.get(portVar)?.value);
    assert.equal(port, ports.get(portVar));
    const adminPort = name === 'ingest' ? Number(env.get('INGEST_ADMIN_PORT')?.value) : undefined;
    const expectedPorts = [
      { name: 'http', containerPort: port },
      ...(adminPort ? [{ name: 'admin', containerPort: adminPort }] : []),
    ];
    assert.deepEqual(container.ports, expectedPorts);
    // Prometheus scrapes the port that serves /metrics: ingest's admin port, else the one port.
    assert.equal(Number(deployment.spec.template.metadata.annotations['prometheus.io/port']), adminPort ?? port);
    assert.equal(container.livenessProbe.httpGet.path, '/healthz');
    assert.equal(container.readinessProbe.httpGet.path, '/readyz');
    for (const probe of [container.livenessProbe, container.readinessProbe]) assert.equal(probe.httpGet.port, 'http');
    // Longer than the longest delivery (5 s deadline) plus runService's 25 s hard stop.
    assert.ok(pod.terminationGracePeriodSeconds > 30, `${name} grace ${pod.terminationGracePeriodSeconds}`);
    const mountPath = container.volumeMounts.find((m: any) => m.name === 'config').mountPath;
    assert.equal(env.get('SLUICE_CONFIG').value, `${mountPath}/sluice.yaml`);
    assert.equal(pod.volumes.find((v: any) => v.name === 'config').configMap.name, 'sluice-config');
    const service = of('Service').find((d) => d.metadata.name === `sluice-${name}`);
    assert.deepEqual(service?.spec.selector, deployment.spec.selector.matchLabels);
    assert.equal(service?.spec.ports[0].port, port);
  }
});

test("each service's own `npm start` and the image's default command start it with SERVICE_NODE_FLAGS", () => {
  for (const name of Object.keys(SERVICES) as ServiceName[]) {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'services', name, 'package.json'), 'utf8'));
    assert.equal(
      pkg.scripts.start,
      ['node', ...SERVICE_NODE_FLAGS[name], 'src/main.ts'].join(' '),
      `services/${name} npm start`,
    );
  }
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
  assert.deepEqual(JSON.parse(cmd ?? 'null'), ['node', ...serviceNodeArgs('ingest')]);
});

test('ingest and deliverer autoscale, the deliverer to at most one replica per partition; audience-sync runs one', () => {
  const targets = of('HorizontalPodAutoscaler')
    .map((h) => h.spec.scaleTargetRef.name)
    .sort();
  assert.deepEqual(targets, ['sluice-deliverer', 'sluice-ingest']);
  const partitions = (parse(configText) as { kafka: { partitions: number } }).kafka.partitions;
  const deliverer = of('HorizontalPodAutoscaler').find((h) => h.metadata.name === 'sluice-deliverer')!;
  assert.ok(
    deliverer.spec.maxReplicas <= partitions,
    `maxReplicas ${deliverer.spec.maxReplicas} ≤ ${partitions} partitions`,
  );
  const audienceSync = of('Deployment').find((d) => d.metadata.name === 'sluice-audience-sync')!;
  assert.equal(audienceSync.spec.replicas, 1);
  assert.equal(audienceSync.spec.strategy.type, 'Recreate');
});

test('the metric scan sees every metric the code declares', async () => {
  const names = await exportedMetricNames();
  const declared = new Set<string>();
  for (const top of ['services', 'packages']) {
    for (const pkg of readdirSync(join(ROOT, top))) {
      const metrics = join(ROOT, top, pkg, 'src', 'metrics.ts');
      let text = '';
      try {
        text = readFileSync(metrics, 'utf8');
      } catch {
        continue;
      }
      for (const m of text.matchAll(/name: '(sluice_[a-z0-9_]+)'/g)) declared.add(m[1]!);
    }
  }
  for (const name of declared) assert.ok(names.has(name), `${name} found by the scan`);
  for (const name of [
    'sluice_consumer_lag',
    'sluice_retry_backlog',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_p99_seconds',
  ]) {
    assert.ok(names.has(name), name);
  }
  for (const name of names)
    assert.ok(!/^sluice_(process|nodejs)_/.test(name), `${name}: default metrics keep their usual names`);
});

test('every metric in the alert rules is one the code exports; the required alerts exist', async () => {
  const names = await exportedMetricNames();
  const rules = parse(readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  const all = rules.groups.flatMap((g) => g.rules);
  for (const rule of all) {
    const used = metricsInPromQL(rule.expr);
    assert.ok(used.length > 0, `${rule.alert} uses a metric`);
    for (const metric of used)
      assert.ok(metric === 'up' || names.has(metric), `${rule.alert}: ${metric} is not exported by any service`);
  }
  const metricsOf = (alert: string) => metricsInPromQL(all.find((r) => r.alert === alert)?.expr ?? '');
  assert.ok(metricsOf('SluiceConsumerLagHigh').includes('sluice_consumer_lag'));
  assert.ok(metricsOf('SluiceDeadLetterRate').includes('sluice_deliverer_dead_lettered_total'));
  assert.ok(metricsOf('SluiceDeliveryFailureRatio').includes('sluice_deliverer_attempts_total'));
  assert.ok(metricsOf('SluiceRetryLate').includes('sluice_retry_lateness_seconds_bucket'));
  assert.ok(metricsOf('SluiceIngest5xx').includes('sluice_ingest_requests_total'));
});

test('every metric in the Grafana dashboard is exported, and the dashboard covers the reference metrics', async () => {
  const names = await exportedMetricNames();
  const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/dashboards/sluice.json'), 'utf8')) as {
    panels: { title: string; targets?: { expr: string }[] }[];
  };
  const used = new Set<string>();
  for (const panel of dashboard.panels) {
    for (const target of panel.targets ?? []) {
      for (const metric of metricsInPromQL(target.expr)) {
        assert.ok(names.has(metric), `panel "${panel.title}": ${metric} is not exported by any service`);
        used.add(metric.replace(/_(bucket|sum|count)$/, ''));
      }
    }
  }
  const section11 = [
    'sluice_ingest_requests_total', // requests by route
    'sluice_ingest_events_total', // events by source, type, outcome
    'sluice_ingest_request_duration_seconds', // ingest latency
    'sluice_deliverer_attempt_duration_seconds', // delivery attempt latency
    'sluice_deliverer_end_to_end_seconds', // receivedAt → delivered
    'sluice_retry_scheduled_total', // retries per tier
    'sluice_retry_lateness_seconds', // retry lateness
    'sluice_deliverer_dead_lettered_total', // dead letters by reason
    'sluice_retry_dead_letters_total',
    'sluice_ingest_rejected_total', // rejected calls by reason
    'sluice_consumer_lag', // lag per partition
    'sluice_audience_identifies_emitted_total', // audience identifies
  ];
  for (const metric of section11) assert.ok(used.has(metric), `the dashboard shows ${metric}`);
});

test('every scrape target and pod carries app_kubernetes_io_part_of=sluice, the label the alerts find targets by', () => {
  const alerts = readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8');
  assert.match(alerts, /up\{app_kubernetes_io_part_of="sluice"\} == 0/);
  assert.doesNotMatch(alerts, /job=/, 'no alert depends on a scrape job name');
  const scrape = parse(readFileSync(join(ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8')) as {
    scrape_configs: { static_configs: { labels: Record<string, string> }[] }[];
  };
  for (const target of scrape.scrape_configs.flatMap((c) => c.static_configs)) {
    assert.equal(target.labels.app_kubernetes_io_part_of, 'sluice');
  }
  for (const deployment of of('Deployment')) {
    assert.equal(
      deployment.spec.template.metadata.labels['app.kubernetes.io/part-of'],
      'sluice',
      deployment.metadata.name,
    );
  }
});

test('the dashboard asks for its data source and filters by namespace and destination', () => {
  const text = readFileSync(join(ROOT, 'deploy/grafana/dashboards/sluice.json'), 'utf8');
  const dashboard = JSON.parse(text) as {
    __inputs: { name: string; type: string }[];
    templating: { list: { name: string; type: string }[] };
    panels: {
      title: string;
      datasource?: { uid: string };
      targets?: { expr: string; datasource?: { uid: string } }[];
    }[];
  };
  assert.deepEqual(
    dashboard.__inputs.map((i) => [i.name, i.type]),
    [['DS_PROMETHEUS', 'datasource']],
  );
  assert.deepEqual(
    dashboard.templating.list.map((v) => [v.name, v.type]),
    [
      ['datasource', 'datasource'],
      ['namespace', 'query'],
      ['destination', 'query'],
    ],
  );
  assert.doesNotMatch(text, /"uid": "prometheus"/, 'no hard-coded data source');
  for (const panel of dashboard.panels) {
    for (const target of panel.targets ?? []) {
      assert.equal(target.datasource?.uid, '$' + '{datasource}', panel.title);
      assert.match(target.expr, /namespace=~"\$namespace"/, `${panel.title}: ${target.expr}`);
      if (
        /sluice_deliverer_(attempts|delivered|retried|dead_lettered|in_flight|end_to_end|attempt_duration)/.test(
          target.expr,
        )
      ) {
        assert.match(target.expr, /destination=~"\$destination"/, `${panel.title}: ${target.expr}`);
      }
    }
  }
});
