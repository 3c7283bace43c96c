// What the code actually reads and exports, collected from the sources so deployment files
// cannot drift from it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMetricsRegistry } from '@sluice/service-kit';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Each service and the environment variable that sets its HTTP port, as the deployment files name them. */
export const SERVICES: Record<string, string> = {
  ingest: 'INGEST_PORT',
  deliverer: 'DELIVERER_PORT',
  retry: 'RETRY_PORT',
  'audience-sync': 'AUDIENCE_SYNC_PORT',
  'delivery-log': 'DELIVERY_LOG_PORT',
};

/** Environment variable names read in packages/config/src/env.ts (the one module that reads the environment). */
export function envVarsReadByConfig(): Set<string> {
  const source = readFileSync(join(ROOT, 'packages/config/src/env.ts'), 'utf8');
  const names = new Set<string>();
  for (const m of source.matchAll(/env\.([A-Z][A-Z0-9_]+)/g)) names.add(m[1]!);
  for (const m of source.matchAll(/port\(env, '([A-Z][A-Z0-9_]+)'/g)) names.add(m[1]!);
  return names;
}

/** Port variables and their defaults, from env.ts + constants.ts. */
export function portVars(): Map<string, number> {
  const env = readFileSync(join(ROOT, 'packages/config/src/env.ts'), 'utf8');
  const constants = readFileSync(join(ROOT, 'packages/config/src/constants.ts'), 'utf8');
  const ports = new Map<string, number>();
  for (const m of env.matchAll(/port\(env, '([A-Z_]+)', DEFAULT_PORTS\.(\w+)\)/g)) {
    const value = new RegExp(`\\b${m[2]}: (\\d+)`).exec(constants);
    if (value) ports.set(m[1]!, Number(value[1]));
  }
  return ports;
}

function tsFiles(dir: string): string[] {
  let out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out = out.concat(tsFiles(path));
    else if (path.endsWith('.ts')) out.push(path);
  }
  return out;
}

/**
 * Every series name the services can export: `name: 'sluice_…'` in services/*\/src and
 * packages/*\/src (histograms add `_bucket`, `_sum`, `_count`), plus prom-client's default
 * process metrics (`process_*`, `nodejs_*`).
 */
export async function exportedMetricNames(): Promise<Set<string>> {
  const names = new Set<string>();
  const files = ['services', 'packages'].flatMap((top) =>
    readdirSync(join(ROOT, top)).flatMap((pkg) => {
      const src = join(ROOT, top, pkg, 'src');
      try {
        return statSync(src).isDirectory() ? tsFiles(src) : [];
      } catch {
        return [];
      }
    }),
  );
  for (const file of files) {
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(
      /new (Counter|Gauge|Histogram|Summary)(?:<[^>]*>)?\(\{\s*name: '(sluice_[a-z0-9_]+)'/g,
    )) {
      names.add(m[2]!);
      if (m[1] === 'Histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${m[2]}${suffix}`);
      if (m[1] === 'Summary') for (const suffix of ['_sum', '_count']) names.add(`${m[2]}${suffix}`);
    }
  }
  const registry = createMetricsRegistry('probe');
  for (const metric of await registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
  }
  registry.clear();
  return names;
}

/** Metric-like identifiers in a PromQL expression (label names, functions and keywords removed). */
export function metricsInPromQL(expr: string): string[] {
  const withoutLabels = expr
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  return [...withoutLabels.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)]
    .map((m) => m[1]!)
    .filter((n) => /^(sluice|process|nodejs)_/.test(n) || n === 'up');
}

/** The rows of the Markdown tables in `text` whose first cell is code (`| \`key\` | …`): key → cell `column`. */
export function docTableRows(text: string, column: number): Map<string, string> {
  return new Map(
    text
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .map((l) => {
        const cells = l.split(' | ');
        return [cells[0]!.slice(3, -1), cells[column] ?? ''] as const;
      }),
  );
}

/** Each service's doc, whose "## Layout" section maps its source files. */
export const SERVICE_DOCS: Record<string, string> = {
  ingest: 'docs/ingest.md',
  deliverer: 'docs/deliverer.md',
  retry: 'docs/retry.md',
  'audience-sync': 'docs/audiences.md',
  'delivery-log': 'docs/delivery-log.md',
};

/** Folders of a service beside `src/` whose files its Layout names as `<folder>/<file>`. */
export const SERVICE_SIDE_FOLDERS: Record<string, string[]> = { 'delivery-log': ['console'] };

function filesUnder(dir: string, prefix: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const rel = `${prefix}${entry.name}`;
    if (entry.isDirectory()) return filesUnder(join(dir, entry.name), `${rel}/`, keep);
    return keep(entry.name) ? [rel] : [];
  });
}

/**
 * The `.ts`/`.js` files of a service: paths relative to its `src/` (`attempt/window.ts`), and
 * those of its side folders relative to the service (`console/app.js`).
 */
export function serviceSourceFiles(service: string): string[] {
  const dir = join(ROOT, 'services', service);
  const code = (name: string) => /\.(ts|js)$/.test(name);
  return [
    ...filesUnder(join(dir, 'src'), '', code),
    ...(SERVICE_SIDE_FOLDERS[service] ?? []).flatMap((folder) => filesUnder(join(dir, folder), `${folder}/`, code)),
  ].sort();
}

/** Where a file named in a service's Layout is: side folders from the service, the rest from `src/`. */
export function layoutFilePath(service: string, name: string): string {
  const dir = join(ROOT, 'services', service);
  const top = name.split('/')[0]!;
  return name.includes('/') && (SERVICE_SIDE_FOLDERS[service] ?? []).includes(top)
    ? join(dir, name)
    : join(dir, 'src', name);
}

/**
 * The files named in the first cell of each row of the first table under `## Layout` in a doc.
 * A bare name after the first file of a cell (`transport/classify.ts`, `retry-after.ts`) is in the
 * same folder as that first file.
 */
export function layoutFiles(doc: string): string[] {
  const lines = doc.split('\n');
  const heading = lines.findIndex((l) => l.startsWith('## Layout'));
  if (heading === -1) return [];
  const rest = lines.slice(heading + 1);
  const first = rest.findIndex((l) => l.startsWith('|') || l.startsWith('## '));
  if (first === -1 || !rest[first]!.startsWith('|')) return [];
  const end = rest.findIndex((l, i) => i > first && !l.startsWith('|'));
  const rows = rest.slice(first + 2, end === -1 ? undefined : end);
  return rows.flatMap((row) => {
    const cell = row.slice(1).split(' | ')[0]!;
    const names = [...cell.matchAll(/`([^`]+\.[a-z]+)`/g)].map((m) => m[1]!);
    const folder = names[0]?.includes('/') ? names[0].slice(0, names[0].lastIndexOf('/') + 1) : '';
    return names.map((name, i) => (i === 0 || name.includes('/') ? name : `${folder}${name}`));
  });
}
