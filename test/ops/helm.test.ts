// deploy/helm/sluice: `helm lint`, `helm template` validated against the Kubernetes schemas
// (kubernetes-validate --strict), and what the rendered resources must hold. helm and
// kubernetes-validate come from PATH or are installed once into the cache dir (ops-tools.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { parseConfig } from '@sluice/config';
import { loadKeyring } from '@sluice/secret-keyring';
import { serviceNodeArgs, type ServiceName } from '@sluice/service-kit';
import { ROOT } from './code-facts.ts';
import { ensureHelm, ensureKubernetesValidate } from './ops-tools.ts';
import { secretsOutsideSecrets } from './secret-placement.ts';

const CHART = join(ROOT, 'deploy/helm/sluice');
const KUBE_VERSION = '1.31.0';
const SERVICES: ServiceName[] = ['ingest', 'deliverer', 'retry', 'audience-sync', 'delivery-log'];
const ALL_OPTIONS = [
  'metrics.serviceMonitor.enabled=true',
  'metrics.prometheusRule.enabled=true',
  'autoscaling.deliverer.keda.enabled=true',
  'kafka.ssl.caFile=/etc/sluice/kafka-tls/ca.crt',
  'kafka.tls.secretName=kafka-cluster-ca',
  'kafka.sasl.mechanism=scram-sha-512',
  'kafka.sasl.username=sluice',
  'kafka.saslSecret.name=kafka-user-sluice',
  'tracing.endpoint=http://otel-collector.observability.svc:4318',
  'tracing.resourceAttributes=deployment.environment=production',
  'tracing.headersSecret.name=otel-export',
  ...keyringSets([
    { id: 'k2', secretName: 'sluice-keyring', key: 'k2' },
    { id: 'k1', secretName: 'sluice-keyring', key: 'k1' },
  ]),
];

/** `--set` values of a runtime destinations keyring (values.runtimeDestinations.keyring). */
function keyringSets(keys: { id: string; secretName: string; key: string }[]): string[] {
  return keys.flatMap((k, i) =>
    Object.entries(k).map(([field, value]) => `runtimeDestinations.keyring[${i}].${field}=${value}`),
  );
}

type Resource = {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: any;
  data?: Record<string, string>;
};
let helm: string;
let validator: string;
const scratch = mkdtempSync(join(tmpdir(), 'sluice-helm-'));

function run(cmd: string, args: string[]) {
  const result = spawnSync(cmd, args, { cwd: CHART, encoding: 'utf8' });
  return { status: result.status, out: `${result.stdout}`, err: `${result.stderr}` };
}

function render(sets: string[] = [], valuesFiles: string[] = []): { text: string; resources: Resource[] } {
  const result = run(helm, [
    'template',
    'sluice',
    '.',
    '--kube-version',
    KUBE_VERSION,
    ...valuesFiles.flatMap((f) => ['-f', f]),
    ...sets.flatMap((s) => ['--set', s]),
  ]);
  assert.equal(result.status, 0, result.err);
  const resources = parseAllDocuments(result.out)
    .map((d) => d.toJS() as Resource)
    .filter(Boolean);
  return { text: result.out, resources };
}

/** What `helm template` says when it refuses to render with `set`: it must fail. */
function refusal(set: string): string {
  const result = run(helm, ['template', 'sluice', '.', '--kube-version', KUBE_VERSION, '--set', set]);
  assert.notEqual(result.status, 0, `rendered with ${set}`);
  return result.err;
}

/** kubernetes-validate --strict on a rendering; returns its warnings. */
function validate(text: string, name: string): string[] {
  const file = join(scratch, `${name}.yaml`);
  writeFileSync(file, text);
  const result = spawnSync(validator, ['--strict', '--quiet', '-k', KUBE_VERSION, file], { encoding: 'utf8' });
  assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
  return `${result.stdout}${result.stderr}`.split('\n').filter((l) => l.startsWith('WARN'));
}

const deployment = (resources: Resource[], name: string) =>
  resources.find((r) => r.kind === 'Deployment' && r.metadata.name === `sluice-${name}`)!;
const container = (resources: Resource[], name: string) => deployment(resources, name).spec.template.spec.containers[0];

before(() => {
  helm = ensureHelm();
  validator = ensureKubernetesValidate();
});

test('the chart: appVersion is the project version, and its alert rules are deploy/prometheus/alerts.yml', () => {
  const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string };
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(chart.appVersion, pkg.version);
  assert.equal(
    readFileSync(join(CHART, 'files/alerts.yml'), 'utf8'),
    readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8'),
  );
});

test('helm lint passes, default and with every option on', () => {
  for (const sets of [[], ALL_OPTIONS]) {
    const result = run(helm, ['lint', '--strict', '.', ...sets.flatMap((s) => ['--set', s])]);
    assert.equal(result.status, 0, `${result.out}${result.err}`);
  }
});

test('helm template validates strictly against the Kubernetes schemas; only the CRD kinds have no schema', () => {
  assert.deepEqual(validate(render().text, 'default'), []);
  const warnings = validate(render(ALL_OPTIONS).text, 'all-options');
  const unknownKinds = warnings.map((w) => /kind (\w+)/.exec(w)?.[1]).sort();
  assert.deepEqual(unknownKinds, ['PrometheusRule', 'ScaledObject', 'ServiceMonitor']);
});

test('each Deployment gets only its own secrets, and its config file validates with them', () => {
  const { resources } = render();
  const configFile = parse(resources.find((r) => r.kind === 'ConfigMap')!.data!['sluice.yaml']!);
  const own: Record<ServiceName, string[]> = {
    ingest: ['SLUICE_ADMIN_TOKEN', 'SLUICE_DEMO_WRITE_KEY'],
    deliverer: ['SLUICE_DEMO_SHARED_SECRET'],
    retry: [],
    'audience-sync': ['SLUICE_ADMIN_TOKEN'],
    'delivery-log': ['SLUICE_DELIVERY_LOG_TOKEN'],
  };
  for (const name of SERVICES) {
    const env: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[] =
      container(resources, name).env;
    const fromSecrets = env.filter((e) => e.valueFrom?.secretKeyRef);
    assert.deepEqual(fromSecrets.map((e) => e.name).sort(), own[name], `${name} reads only its own secrets`);
    for (const e of fromSecrets)
      assert.equal(e.valueFrom!.secretKeyRef.name, `sluice-${name}`, `${name}: ${e.name} from its own Secret`);
    // The process environment: real values for its own secrets, the chart's placeholders for the others'.
    const processEnv = Object.fromEntries(env.map((e) => [e.name, e.value ?? `secret-of-${name}-${e.name}`]));
    const config = parseConfig(configFile, processEnv);
    if (name === 'ingest') assert.equal(config.sources[0]!.writeKeys[0], `secret-of-ingest-SLUICE_DEMO_WRITE_KEY`);
    for (const e of env.filter((x) => x.value?.startsWith('whsec_'))) {
      assert.ok(!own[name].includes(e.name), `${name}: placeholder only for another service's ${e.name}`);
    }
  }
});

test('runtime destinations: every service loads the same keyring, each key from its Secret; none set in config', () => {
  type Env = { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } };
  const { resources } = render(ALL_OPTIONS);
  const configFile = parse(resources.find((r) => r.kind === 'ConfigMap')!.data!['sluice.yaml']!);
  // What a Secret's key holds: 32 bytes as 64 hex characters, one value per Secret and key.
  const secretValue = (ref: { name: string; key: string }) =>
    createHash('sha256').update(`${ref.name}/${ref.key}`).digest('hex');
  const rings = SERVICES.map((name) => {
    const env: Env[] = container(resources, name).env;
    const processEnv = Object.fromEntries(env.map((e) => [e.name, e.value ?? secretValue(e.valueFrom!.secretKeyRef)]));
    const config = parseConfig(configFile, processEnv);
    assert.ok(config.runtimeDestinations, `${name}: runtime destinations on`);
    // A variable missing from a Deployment, or a placeholder in its place, refuses the service's start here.
    const ring = loadKeyring(config.runtimeDestinations.keyring, {
      env: processEnv,
      field: 'runtimeDestinations.keyring',
    });
    return { name, ring, sealed: ring.encrypt('probe', 'helm-test') };
  });
  assert.deepEqual(
    configFile.runtimeDestinations.keyring.map((k: { id: string }) => k.id),
    ['k2', 'k1'],
  );
  for (const writer of rings)
    for (const reader of rings)
      assert.equal(
        reader.ring.decrypt(writer.sealed, 'helm-test'),
        'probe',
        `${reader.name} reads what ${writer.name} wrote`,
      );
  assert.match(
    refusal('config.runtimeDestinations.keyring[0].id=k1'),
    /config.runtimeDestinations is set by the chart/,
  );
});

/** Values that give the demo endpoint a URL and an Authorization header from Secrets (docs/operations.md). */
const ENDPOINT_SECRETS = `
config:
  destinations:
    - id: demo-webhooks
      type: webhooks
      sourceIds: [demo]
      settings:
        webhooks:
          - url: { env: SLUICE_ORDERS_HOOK_URL }
            headers: { Authorization: { env: SLUICE_ORDERS_HOOK_AUTH } }
        sharedSecret: { env: SLUICE_DEMO_SHARED_SECRET }
services:
  deliverer:
    secretEnv:
      - { name: SLUICE_DEMO_SHARED_SECRET, secretName: sluice-deliverer, key: SLUICE_DEMO_SHARED_SECRET }
      - { name: SLUICE_ORDERS_HOOK_URL, secretName: sluice-deliverer, key: orders-url, placeholder: url }
      - { name: SLUICE_ORDERS_HOOK_AUTH, secretName: sluice-deliverer, key: orders-auth }
  delivery-log:
    secretEnv:
      - { name: SLUICE_DELIVERY_LOG_TOKEN, secretName: sluice-delivery-log, key: SLUICE_DELIVERY_LOG_TOKEN }
      - { name: SLUICE_ORDERS_HOOK_URL, secretName: sluice-delivery-log, key: orders-url, placeholder: url }
`;

test('no secret outside a Secret: defaults, every option, and an endpoint URL and header from Secrets', () => {
  assert.deepEqual(secretsOutsideSecrets(render().resources), []);
  assert.deepEqual(secretsOutsideSecrets(render(ALL_OPTIONS).resources), []);
  const values = join(scratch, 'endpoint-secrets.yaml');
  writeFileSync(values, ENDPOINT_SECRETS);
  const { text, resources } = render([], [values]);
  assert.deepEqual(secretsOutsideSecrets(resources), []);
  assert.deepEqual(validate(text, 'endpoint-secrets'), []);
  const configFile = parse(resources.find((r) => r.kind === 'ConfigMap')!.data!['sluice.yaml']!);
  const hookUrl = 'https://sluice:pa55@hooks.example.com/in?token=t0k';
  for (const name of SERVICES) {
    const env: { name: string; value?: string }[] = container(resources, name).env;
    // Own secrets from the Secret (a real URL for the URL one); the others' are placeholders.
    const processEnv = Object.fromEntries(
      env.map((e) => [
        e.name,
        e.value ?? (e.name === 'SLUICE_ORDERS_HOOK_URL' ? hookUrl : `secret-${e.name}-held-in-a-kubernetes-secret`),
      ]),
    );
    const endpoint = parseConfig(configFile, processEnv).destinations[0]!.endpoints[0]!;
    if (name === 'deliverer' || name === 'delivery-log') {
      assert.equal(endpoint.url, hookUrl, name);
      assert.equal(endpoint.ref, 'https://***@hooks.example.com/in?***');
    } else assert.match(endpoint.url, new RegExp(`^https://not-used-by-${name}\\.invalid/`), name);
  }
});

test('Deployments: the command, ports, probes and image of each service; audience-sync runs one pod, Recreate', () => {
  const { resources } = render();
  const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string };
  for (const name of SERVICES) {
    const c = container(resources, name);
    assert.deepEqual(c.command, ['node', ...serviceNodeArgs(name)]);
    assert.equal(c.image.split(':').pop(), chart.appVersion);
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(deployment(resources, name).spec.template.metadata.labels['app.kubernetes.io/part-of'], 'sluice');
    for (const kind of ['Service', 'PodDisruptionBudget', 'NetworkPolicy']) {
      assert.ok(
        resources.some((r) => r.kind === kind && r.metadata.name === `sluice-${name}`),
        `${kind} sluice-${name}`,
      );
    }
  }
  const ingestPorts = container(resources, 'ingest').ports.map((p: { name: string }) => p.name);
  assert.deepEqual(ingestPorts, ['http', 'admin']);
  assert.ok(
    container(resources, 'ingest').env.some(
      (e: { name: string; value: string }) => e.name === 'INGEST_ADMIN_PORT' && e.value === '9464',
    ),
  );
  const audience = deployment(resources, 'audience-sync');
  assert.equal(audience.spec.replicas, 1);
  assert.equal(audience.spec.strategy.type, 'Recreate');
});

test('the deliverer scales to at most one replica per partition: HPA or KEDA, and more is refused', () => {
  const partitions = 12;
  const hpa = render().resources.find(
    (r) => r.kind === 'HorizontalPodAutoscaler' && r.metadata.name === 'sluice-deliverer',
  )!;
  assert.equal(hpa.spec.maxReplicas, partitions);
  const keda = render(['autoscaling.deliverer.keda.enabled=true']).resources;
  const scaled = keda.find((r) => r.kind === 'ScaledObject')!;
  assert.equal(scaled.spec.maxReplicaCount, partitions);
  assert.equal(scaled.spec.triggers[0].metadata.consumerGroup, 'sluice.deliverer');
  assert.ok(!keda.some((r) => r.kind === 'HorizontalPodAutoscaler' && r.metadata.name === 'sluice-deliverer'));
  assert.match(
    refusal('autoscaling.deliverer.maxReplicas=24'),
    /maxReplicas \(24\) is above config.kafka.partitions \(12\)/,
  );
});

test('Kafka security settings reach the config file; the SASL secret and the TLS files reach every pod', () => {
  const { resources } = render(ALL_OPTIONS);
  const kafka = parse(resources.find((r) => r.kind === 'ConfigMap')!.data!['sluice.yaml']!).kafka;
  assert.deepEqual(kafka.ssl, { caFile: '/etc/sluice/kafka-tls/ca.crt' });
  assert.deepEqual(kafka.sasl, {
    mechanism: 'scram-sha-512',
    username: 'sluice',
    password: { env: 'SLUICE_KAFKA_SASL_SECRET' },
  });
  for (const name of SERVICES) {
    const c = container(resources, name);
    const sasl = c.env.find((e: { name: string }) => e.name === 'SLUICE_KAFKA_SASL_SECRET');
    assert.deepEqual(sasl?.valueFrom?.secretKeyRef, { name: 'kafka-user-sluice', key: 'password' }, name);
    assert.ok(
      c.volumeMounts.some((m: { mountPath: string }) => m.mountPath === '/etc/sluice/kafka-tls'),
      name,
    );
  }
});

test('tracing: no OTEL_ variable by default; with an endpoint every service gets them, the headers from their Secret', () => {
  type Env = { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } };
  const otel = (resources: Resource[], name: string) =>
    (container(resources, name).env as Env[]).filter((e) => e.name.startsWith('OTEL_'));
  const defaults = render().resources;
  for (const name of SERVICES) assert.deepEqual(otel(defaults, name), [], `${name}: tracing off by default`);
  const traced = render(ALL_OPTIONS).resources;
  for (const name of SERVICES) {
    assert.deepEqual(otel(traced, name), [
      { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel-collector.observability.svc:4318' },
      { name: 'OTEL_TRACES_SAMPLER', value: 'parentbased_traceidratio' },
      { name: 'OTEL_TRACES_SAMPLER_ARG', value: '0.01' },
      { name: 'OTEL_RESOURCE_ATTRIBUTES', value: 'deployment.environment=production' },
      { name: 'OTEL_EXPORTER_OTLP_HEADERS', valueFrom: { secretKeyRef: { name: 'otel-export', key: 'headers' } } },
    ]);
  }
});

test('ServiceMonitor labels targets for the alerts; PrometheusRule holds the alert rules', () => {
  const { resources } = render(ALL_OPTIONS);
  const monitor = resources.find((r) => r.kind === 'ServiceMonitor')!;
  assert.ok(monitor.spec.targetLabels.includes('app.kubernetes.io/part-of'));
  for (const name of SERVICES) {
    const service = resources.find((r) => r.kind === 'Service' && r.metadata.name === `sluice-${name}`)!;
    assert.equal(service.metadata.labels?.['app.kubernetes.io/part-of'], 'sluice');
  }
  const rule = resources.find((r) => r.kind === 'PrometheusRule')!;
  const alerts = parse(readFileSync(join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8'));
  assert.deepEqual(rule.spec, alerts);
});

test('the delivery log keeps its embedded database on a volume by default, capped below the volume size', () => {
  const { resources } = render();
  const claim = resources.find((r) => r.kind === 'PersistentVolumeClaim' && r.metadata.name === 'sluice-delivery-log');
  assert.ok(claim, 'a PersistentVolumeClaim for the delivery log');
  const configFile = parse(resources.find((r) => r.kind === 'ConfigMap')!.data!['sluice.yaml']!);
  const config = parseConfig(configFile, {
    SLUICE_DELIVERY_LOG_TOKEN: 'delivery-log-token-of-32-characters-or-more',
    SLUICE_DEMO_WRITE_KEY: 'k',
    SLUICE_ADMIN_TOKEN: 'ingest-admin-token-of-32-characters-or-more',
    SLUICE_DEMO_SHARED_SECRET: 's',
  });
  const pod = deployment(resources, 'delivery-log').spec.template.spec;
  const mount = container(resources, 'delivery-log').volumeMounts.find((m: { name: string }) => m.name === 'data');
  assert.equal(mount.mountPath, config.deliveryLog.dataDir);
  assert.equal(
    pod.volumes.find((v: { name: string }) => v.name === 'data').persistentVolumeClaim.claimName,
    'sluice-delivery-log',
  );
  const gib = Number(/^(\d+)Gi$/.exec(claim.spec.resources.requests.storage)![1]);
  assert.ok(config.deliveryLog.maxSizeBytes! <= 0.75 * gib * 2 ** 30, 'the size cap leaves a quarter of the volume');
  const off = render(['services.delivery-log.persistence.enabled=false']).resources;
  assert.ok(!off.some((r) => r.kind === 'PersistentVolumeClaim'));
});
