// docker-compose.yml against the code: no Docker engine runs here, so the file is parsed and every
// Sluice service's environment, ports, command and health check are checked against what the code reads.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { loadConfigFile } from '@sluice/config';
import { findDemoTarget } from '@sluice/demo-receiver';
import { serviceNodeArgs, type ServiceName } from '@sluice/service-kit';
import { envVarsReadByConfig, layoutFilePath, portVars, ROOT, SERVICES, serviceSourceFiles } from './code-facts.ts';

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  healthcheck?: { test: string[] };
  volumes?: string[];
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};

test('compose has Kafka (KRaft), a schema registry, the five services, the demo receiver, Prometheus and Grafana', () => {
  const s = compose.services;
  assert.equal(s.kafka?.image, 'apache/kafka:3.9.1');
  assert.match(String(s.kafka?.environment?.KAFKA_PROCESS_ROLES), /broker,controller/);
  assert.match(s['schema-registry']?.image ?? '', /cp-schema-registry|apicurio/);
  for (const name of [...Object.keys(SERVICES), 'demo-receiver'])
    assert.ok(s[name]?.build !== undefined, `${name} is built from the repo Dockerfile`);
  assert.match(s.prometheus?.image ?? '', /^prom\/prometheus/);
  assert.match(s.grafana?.image ?? '', /^grafana\/grafana/);
  assert.ok(existsSync(join(ROOT, 'Dockerfile')));
});

test('every Sluice service: env names ⊆ what packages/config/src/env.ts reads, with the right values', () => {
  const known = envVarsReadByConfig();
  const ports = portVars();
  assert.equal(known.size, 11, `env.ts reads ${[...known].join(', ')}`);
  for (const [name, portVar] of Object.entries(SERVICES)) {
    const service = compose.services[name]!;
    const env = service.environment ?? {};
    const unknown = Object.keys(env).filter((k) => !known.has(k));
    assert.deepEqual(unknown, [], `${name} sets variables no code reads`);
    for (const required of ['KAFKA_BROKERS', 'SLUICE_CONFIG', portVar])
      assert.ok(env[required] !== undefined, `${name} sets ${required}`);
    assert.equal(Number(env[portVar]), ports.get(portVar), `${name} keeps the default port of ${portVar}`);
    const ownPorts = [portVar, ...(name === 'ingest' ? ['INGEST_ADMIN_PORT'] : [])];
    const otherPorts = Object.keys(env).filter((k) => k.endsWith('_PORT') && !ownPorts.includes(k));
    assert.deepEqual(otherPorts, [], `${name} sets only its own port variable`);
    assert.match(String(env.KAFKA_BROKERS), /^kafka:\d+$/);
    if (env.LOG_LEVEL !== undefined)
      assert.ok(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(String(env.LOG_LEVEL)));
  }
});

test('every service that encodes or decodes events with the schema registry gets SCHEMA_REGISTRY_URL, the same one', () => {
  // A service reading the wire format without the registry takes every event for undecodable.
  const readsRegistry = Object.keys(SERVICES).filter((name) =>
    serviceSourceFiles(name).some((file) =>
      readFileSync(layoutFilePath(name, file), 'utf8').includes('env.schemaRegistryUrl'),
    ),
  );
  assert.ok(readsRegistry.includes('delivery-log') && readsRegistry.includes('ingest'), readsRegistry.join(', '));
  const urls = new Set(readsRegistry.map((name) => compose.services[name]!.environment?.SCHEMA_REGISTRY_URL));
  assert.equal(urls.size, 1, `one registry for ${readsRegistry.join(', ')}: ${[...urls].join(', ')}`);
  assert.ok(!urls.has(undefined), `each of ${readsRegistry.join(', ')} sets SCHEMA_REGISTRY_URL`);
  for (const name of readsRegistry)
    assert.ok(
      (compose.services[name] as { depends_on?: Record<string, unknown> }).depends_on?.['schema-registry'],
      `${name} starts after the schema registry`,
    );
});

test('every { env } secret of the compose config file is set in every Sluice service (each validates the whole file)', () => {
  const envRefs = (node: unknown): string[] =>
    Array.isArray(node)
      ? node.flatMap(envRefs)
      : node !== null && typeof node === 'object'
        ? Object.keys(node).length === 1 && typeof (node as { env?: unknown }).env === 'string'
          ? [(node as { env: string }).env]
          : Object.values(node).flatMap(envRefs)
        : [];
  const names = envRefs(parse(readFileSync(join(ROOT, 'config/compose.yaml'), 'utf8')));
  for (const service of Object.keys(SERVICES))
    for (const name of names)
      assert.ok(compose.services[service]!.environment?.[name] !== undefined, `${service} sets ${name}`);
});

test('every Sluice service: its command, published port and /healthz check agree with its port variable', () => {
  for (const [name, portVar] of Object.entries(SERVICES)) {
    const service = compose.services[name]!;
    const port = Number(service.environment?.[portVar]);
    assert.deepEqual(service.command, ['node', ...serviceNodeArgs(name as ServiceName)]);
    assert.ok(existsSync(join(ROOT, 'services', name, 'src', 'main.ts')));
    assert.ok(service.ports?.includes(`${port}:${port}`), `${name} publishes ${port}: ${service.ports}`);
    const check = (service.healthcheck?.test ?? []).join(' ');
    assert.ok(
      check.includes(`http://127.0.0.1:${port}/healthz`),
      `${name} health check hits /healthz on ${port}: ${check}`,
    );
  }
});

test('the compose config is valid, mounted where SLUICE_CONFIG points, and its demo destination reaches the demo receiver', () => {
  const config = loadConfigFile(join(ROOT, 'config/compose.yaml'));
  for (const name of Object.keys(SERVICES)) {
    const service = compose.services[name]!;
    const path = String(service.environment?.SLUICE_CONFIG);
    assert.ok(
      service.volumes?.some((v) => v.split(':')[1] === path),
      `${name} mounts ${path}`,
    );
  }
  const target = findDemoTarget(config);
  assert.equal(target?.hostname, 'demo-receiver');
  assert.ok(compose.services['demo-receiver']?.ports?.includes(`${target?.port}:${target?.port}`));
  const subnet = (
    parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      networks: { sluice: { ipam: { config: { subnet: string }[] } } };
    }
  ).networks.sluice.ipam.config[0]!.subnet;
  assert.ok(config.delivery.ssrf.allowCidrs.includes(subnet), 'the SSRF allow-list opens exactly the compose network');
});

test('Prometheus scrapes every service on the port that serves /metrics (ingest: its admin port); Grafana is provisioned with the dashboard', () => {
  const prometheus = parse(readFileSync(join(ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8')) as {
    rule_files: string[];
    scrape_configs: { static_configs: { targets: string[] }[] }[];
  };
  const targets = prometheus.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets));
  for (const [name, portVar] of Object.entries(SERVICES)) {
    const env = compose.services[name]!.environment ?? {};
    const metricsPort = name === 'ingest' ? env.INGEST_ADMIN_PORT : env[portVar];
    assert.ok(metricsPort !== undefined && targets.includes(`${name}:${metricsPort}`), `scrapes ${name}`);
  }
  const mounts = [...(compose.services.prometheus?.volumes ?? []), ...(compose.services.grafana?.volumes ?? [])];
  for (const rule of prometheus.rule_files)
    assert.ok(
      mounts.some((v) => v.split(':')[1] === rule),
      `rule file ${rule} is mounted`,
    );
  for (const mount of mounts) assert.ok(existsSync(join(ROOT, mount.split(':')[0]!)), `${mount} exists in the repo`);
});
