// Where secrets may sit in Kubernetes resources (docs/operations.md, "Secrets per service"): in
// Secrets only. Used on the rendered Helm chart and on the manifests under deploy/kubernetes.
import { createHash } from 'node:crypto';
import { parse } from 'yaml';
import { literalSecretFields } from '@sluice/config';

export interface K8sResource {
  kind: string;
  metadata: { name: string };
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** Environment variable names that hold credentials. */
const SECRET_VAR = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|DATABASE_URL|HOOK/i;

/**
 * The inert values a Deployment holds for a secret only another service reads: a `whsec_` value,
 * or an `https://….invalid/` URL, each derived from the service and variable names.
 */
function isPlaceholder(service: string, name: string, value: string): boolean {
  const hash = createHash('sha256').update(`sluice-not-used-by-${service}/${name}`).digest('hex');
  return (
    value === `whsec_${Buffer.from(hash).toString('base64')}` ||
    value === `https://not-used-by-${service}.invalid/${hash.slice(0, 16)}`
  );
}

/** The values of every Secret (`stringData`, and `data` decoded). */
function secretValues(resources: K8sResource[]): string[] {
  const values = resources
    .filter((r) => r.kind === 'Secret')
    .flatMap((r) => [
      ...Object.values(r.stringData ?? {}),
      ...Object.values(r.data ?? {}).map((v) => Buffer.from(v, 'base64').toString('utf8')),
    ])
    .filter((v) => v.length >= 8);
  return [...new Set(values)];
}

/**
 * Every secret found outside a Secret, as `<kind>/<name>: <where>`: a config file in a ConfigMap
 * with a secret written in clear (`literalSecretFields`), a container variable with a credential's
 * name given as a plain `value` that is not a placeholder, and any Secret's value appearing in
 * another resource.
 */
export function secretsOutsideSecrets(resources: K8sResource[]): string[] {
  const problems: string[] = [];
  const values = secretValues(resources);
  for (const r of resources) {
    if (r.kind === 'Secret') continue;
    const where = `${r.kind}/${r.metadata.name}`;
    for (const [key, text] of Object.entries(r.data ?? {})) {
      if (!/\.ya?ml$|\.json$/.test(key)) continue;
      const config = parse(text) as unknown;
      for (const field of literalSecretFields(config)) problems.push(`${where}: ${key} ${field} written in clear`);
    }
    const pod = r.spec?.template?.spec ?? r.spec?.jobTemplate?.spec?.template?.spec;
    const service = (r.metadata.name.match(/(ingest|deliverer|retry|audience-sync|delivery-log)$/) ?? [])[1] ?? '';
    for (const container of [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])]) {
      for (const e of container.env ?? []) {
        if (e.value !== undefined && SECRET_VAR.test(e.name) && !isPlaceholder(service, e.name, String(e.value)))
          problems.push(`${where}: env ${e.name} is a plain value, not from a Secret`);
      }
    }
    const text = JSON.stringify(r);
    for (const v of values) if (text.includes(v)) problems.push(`${where}: holds the value of a Secret`);
  }
  return problems;
}
