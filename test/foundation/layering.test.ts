import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The layering of docs/CONVENTIONS.md, checked on every import of the tree (static, type-only,
 * re-exports and dynamic `import()`): packages never import a service, a service's source never
 * imports another service, tests and benchmarks reach another service only through its package
 * name (its `src/index.ts`), source files import each other without circles, and every package a
 * file imports is declared in the `package.json` of the workspace that holds it.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
/** The most names a service's `src/index.ts` exports: its factory, its options and what its tests and benchmarks drive. */
const MAX_SERVICE_EXPORTS = 10;

const services = readdirSync(join(root, 'services')).filter((d) =>
  existsSync(join(root, 'services', d, 'package.json')),
);
const serviceByPackage = new Map(
  services.map((d) => [JSON.parse(readFileSync(join(root, 'services', d, 'package.json'), 'utf8')).name as string, d]),
);

function tsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module specifier a file imports or re-exports. */
function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
}

type Target = { service: string; byName: boolean };

/** The service a specifier reaches, and whether by its package name alone (its public index). */
function serviceTarget(file: string, specifier: string): Target | undefined {
  if (specifier.startsWith('.')) {
    const parts = relative(root, resolve(dirname(file), specifier)).split(sep);
    return parts[0] === 'services' && parts[1] !== undefined ? { service: parts[1], byName: false } : undefined;
  }
  const [scope, name] = specifier.split('/');
  const service = serviceByPackage.get(`${scope}/${name}`);
  if (service === undefined) return undefined;
  return { service, byName: specifier === `${scope}/${name}` };
}

/** Where a file lives: in a package, in a service's source, or a test or benchmark (of a service, or of the whole). */
function ownerOf(file: string): { kind: 'package' | 'service-src' | 'test'; service?: string } {
  const [top, name, sub] = relative(root, file).split(sep);
  if (top === 'packages') return { kind: 'package' };
  if (top === 'services' && sub === 'src') return { kind: 'service-src', service: name! };
  if (top === 'services') return { kind: 'test', service: name! };
  return { kind: 'test' };
}

/** The rules `file` breaks with these imports, one line each: the file, what it imports, and the rule. */
function violationsOf(file: string, specifiers: string[]): string[] {
  const owner = ownerOf(file);
  const broken: string[] = [];
  for (const specifier of specifiers) {
    const target = serviceTarget(file, specifier);
    if (target === undefined || target.service === owner.service) continue;
    const where = `${relative(root, file)} imports '${specifier}'`;
    if (owner.kind === 'package') broken.push(`${where}: a package never imports a service`);
    else if (owner.kind === 'service-src') broken.push(`${where}: a service's source never imports another service`);
    else if (!target.byName)
      broken.push(`${where}: tests and benchmarks reach a service only by its package name (its src/index.ts)`);
  }
  return broken;
}

/** The `name`, `dependencies` and `devDependencies` of a `package.json`. */
interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** The package a bare specifier names (`@sluice/kafka`, `kafkajs`), or undefined for a relative path or a Node built-in. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || isBuiltin(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * The packages `file` (relative to the root) imports that the `package.json` of its workspace does
 * not declare, one line each: a workspace's `src/` only from its `dependencies`, its tests (and
 * anything else of it) from its `dependencies` or `devDependencies`; files outside `packages/` and
 * `services/` (the root's tests and benchmarks) from the root's. `manifestOf` reads the
 * `package.json` of a workspace folder (`''` for the root).
 */
function undeclaredImports(
  file: string,
  specifiers: readonly string[],
  manifestOf: (dir: string) => Manifest,
): string[] {
  const [top, name, sub] = file.split('/');
  const dir = (top === 'packages' || top === 'services') && sub !== undefined ? `${top}/${name}` : '';
  const manifest = manifestOf(dir);
  const source = dir !== '' && sub === 'src';
  const declared = new Set([
    manifest.name,
    ...Object.keys(manifest.dependencies ?? {}),
    ...(source ? [] : Object.keys(manifest.devDependencies ?? {})),
  ]);
  const where = `${dir === '' ? '' : `${dir}/`}package.json ${source ? 'dependencies' : 'dependencies or devDependencies'}`;
  return [...new Set(specifiers.map(packageOf))]
    .filter((pkg): pkg is string => pkg !== undefined && !declared.has(pkg))
    .map((pkg) => `${file} imports '${pkg}': not in ${where}`);
}

const manifests = new Map<string, Manifest>();
const manifestOf = (dir: string): Manifest => {
  let manifest = manifests.get(dir);
  if (manifest === undefined) {
    manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest;
    manifests.set(dir, manifest);
  }
  return manifest;
};

/** Circles of relative imports among `files` (each reported once, as the files in order). */
function importCircles(files: string[]): string[][] {
  const known = new Set(files);
  const edges = new Map(
    files.map((file) => [
      file,
      importsOf(file)
        .filter((s) => s.startsWith('.'))
        .map((s) => resolve(dirname(file), s))
        .filter((target) => known.has(target)),
    ]),
  );
  const circles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === 'open') circles.push(path.slice(path.indexOf(next)).map((f) => relative(root, f)));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return circles;
}

/** The names a module exports, read from its `export { … }`, `export type { … }` and `export <declaration>` statements. */
function exportedNames(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const names: string[] = [];
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      if (clause && ts.isNamedExports(clause)) names.push(...clause.elements.map((e) => e.name.text));
      else names.push(`* from ${(statement.moduleSpecifier as ts.StringLiteral | undefined)?.text}`);
    } else if (ts.canHaveModifiers(statement)) {
      const exported = ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      const name = (statement as { name?: ts.Identifier }).name;
      if (exported && name) names.push(name.text);
      if (exported && ts.isVariableStatement(statement)) {
        for (const d of statement.declarationList.declarations) names.push(d.name.getText(source));
      }
    }
  }
  return names;
}

const everyFile = ['packages', 'services', 'test', 'bench'].flatMap((d) => tsFiles(join(root, d)));
const sourceFiles = everyFile.filter((f) => /^(packages|services)\/[^/]+\/src\//.test(relative(root, f)));

describe('layering (docs/CONVENTIONS.md)', () => {
  it('no package imports a service, no service imports another, tests and benchmarks only through its index', () => {
    assert.ok(everyFile.length > 300, `only ${everyFile.length} files found under ${root}`);
    assert.deepEqual(
      everyFile.flatMap((file) => violationsOf(file, importsOf(file))),
      [],
    );
  });

  it('the check finds each kind of break, and names the file', () => {
    const at = (f: string) => join(root, f);
    assert.deepEqual(violationsOf(at('packages/webhook/src/x.ts'), ['@sluice/deliverer', '@sluice/config']), [
      "packages/webhook/src/x.ts imports '@sluice/deliverer': a package never imports a service",
    ]);
    assert.equal(
      violationsOf(at('services/delivery-log/src/x.ts'), [
        '@sluice/deliverer',
        '../../deliverer/src/index.ts',
        './y.ts',
      ]).length,
      2,
    );
    assert.deepEqual(
      violationsOf(at('test/e2e/x.ts'), [
        '@sluice/deliverer',
        '../../services/ingest/src/constants.ts',
        '@sluice/webhook',
      ]),
      [
        "test/e2e/x.ts imports '../../services/ingest/src/constants.ts': tests and benchmarks reach a service only by its package name (its src/index.ts)",
      ],
    );
    assert.equal(violationsOf(at('bench/x.ts'), ['@sluice/ingest/src/constants.ts']).length, 1);
    assert.deepEqual(violationsOf(at('services/retry/test/x.ts'), ['@sluice/deliverer', '../src/service.ts']), []);
  });

  it("every package a file imports is declared in its workspace's package.json", () => {
    assert.deepEqual(
      everyFile.flatMap((file) =>
        undeclaredImports(relative(root, file).split(sep).join('/'), importsOf(file), manifestOf),
      ),
      [],
    );
  });

  it('the declaration check tells source from tests, and the root from a workspace', () => {
    const fixture: Record<string, Manifest> = {
      '': { name: 'root', devDependencies: { typescript: '~5.9.3', '@sluice/analytics': '0.1.0' } },
      'services/demo': {
        name: '@sluice/demo',
        dependencies: { '@sluice/kafka': '0.1.0' },
        devDependencies: { '@sluice/testkit': '0.1.0' },
      },
    };
    const of = (dir: string) => fixture[dir]!;
    const imports = ['@sluice/kafka/src/x.ts', '@sluice/testkit', 'kafkajs', 'node:fs', 'fs', './y.ts', '@sluice/demo'];
    assert.deepEqual(undeclaredImports('services/demo/src/a.ts', imports, of), [
      "services/demo/src/a.ts imports '@sluice/testkit': not in services/demo/package.json dependencies",
      "services/demo/src/a.ts imports 'kafkajs': not in services/demo/package.json dependencies",
    ]);
    assert.deepEqual(undeclaredImports('services/demo/test/a.test.ts', imports, of), [
      "services/demo/test/a.test.ts imports 'kafkajs': not in services/demo/package.json dependencies or devDependencies",
    ]);
    assert.deepEqual(undeclaredImports('services/demo/test/a.test.ts', ['@sluice/kafka', '@sluice/testkit'], of), []);
    assert.deepEqual(undeclaredImports('test/e2e/a.test.ts', ['typescript', '@sluice/analytics', 'node:test'], of), []);
    assert.deepEqual(undeclaredImports('bench/a.bench.ts', ['@sluice/kafka'], of), [
      "bench/a.bench.ts imports '@sluice/kafka': not in package.json dependencies or devDependencies",
    ]);
  });

  it('source files under packages/*/src and services/*/src import each other without circles', () => {
    assert.deepEqual(importCircles(sourceFiles), []);
  });

  it(`each service's index exports at most ${MAX_SERVICE_EXPORTS} names`, () => {
    for (const service of services) {
      const names = exportedNames(join(root, 'services', service, 'src', 'index.ts'));
      assert.ok(names.length <= MAX_SERVICE_EXPORTS, `services/${service}/src/index.ts exports ${names.join(', ')}`);
    }
  });
});
