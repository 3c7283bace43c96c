// docs/configuration.md cannot drift from the schema or the environment the code reads, nor a
// service's doc from the files of its source tree.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigSchema } from '@sluice/config';
import {
  docTableRows,
  envVarsReadByConfig,
  layoutFilePath,
  layoutFiles,
  ROOT,
  SERVICE_DOCS,
  serviceSourceFiles,
} from './code-facts.ts';

interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  default?: unknown;
}

/** Every key path of the schema: `destinations[].settings.webhooks[].url`, with its default. */
function keyPaths(node: SchemaNode, path = '', out: [string, unknown][] = []): [string, unknown][] {
  if (node.type === 'object' && node.properties) {
    for (const [key, child] of Object.entries(node.properties)) {
      const childPath = path ? `${path}.${key}` : key;
      out.push([childPath, child.default]);
      keyPaths(child, childPath, out);
    }
  } else if (node.type === 'array' && node.items) {
    keyPaths(node.items, `${path}[]`, out);
  }
  return out;
}

const doc = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
const rows = docTableRows(doc, 2);

test('docs/configuration.md has a row for every config key, with its default', () => {
  const paths = keyPaths(ConfigSchema as SchemaNode);
  assert.ok(paths.length > 40);
  for (const [path, defaultValue] of paths) {
    assert.ok(rows.has(path), `docs/configuration.md lacks ${path}`);
    if (defaultValue !== undefined && !(typeof defaultValue === 'object' && !Array.isArray(defaultValue))) {
      assert.ok(
        rows.get(path)!.includes(`\`${JSON.stringify(defaultValue)}\``),
        `${path}: default ${JSON.stringify(defaultValue)} in docs: ${rows.get(path)}`,
      );
    }
  }
  const known = new Set(paths.map(([p]) => p));
  const stale = [...rows.keys()].filter((k) => !known.has(k) && !/^[A-Z_]+$/.test(k));
  assert.deepEqual(stale, [], 'documented keys the schema does not have');
});

test('docs/configuration.md documents every environment variable the code reads', () => {
  for (const name of envVarsReadByConfig()) assert.ok(rows.has(name), `docs lack ${name}`);
});

test("each service's doc maps every source file in its Layout table, and only files that exist", () => {
  for (const [service, docPath] of Object.entries(SERVICE_DOCS)) {
    const named = layoutFiles(readFileSync(join(ROOT, docPath), 'utf8'));
    assert.ok(named.length > 0, `${docPath} has no "## Layout" table`);
    const missing = serviceSourceFiles(service).filter((file) => !named.includes(file));
    assert.deepEqual(missing, [], `${docPath}: files of services/${service} its Layout table does not name`);
    const gone = named.filter((name) => !existsSync(layoutFilePath(service, name)));
    assert.deepEqual(gone, [], `${docPath}: files its Layout table names that services/${service} does not have`);
  }
});
