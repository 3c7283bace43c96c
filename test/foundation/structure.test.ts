import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The structure of docs/CONVENTIONS.md, measured on the source with the TypeScript compiler:
 * no function, method or arrow in the deliverer takes more than three parameters or a boolean
 * one (an options or context object, or a named mode, instead), the deliverer's `src/` has at most
 * eight entries at the top (one folder per feature), no file name stands twice within a service's
 * `src/`, and `createDeliverer` only wires (at most 60 lines).
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const delivererSrc = join(root, 'services', 'deliverer', 'src');
const MAX_PARAMETERS = 3;
const MAX_TOP_ENTRIES = 8;
const MAX_FACTORY_LINES = 60;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const parse = (file: string): ts.SourceFile =>
  ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);

/** Every function-like node of a file: declarations, methods, arrows, function expressions and signatures. */
function functionsOf(source: ts.SourceFile): (ts.SignatureDeclaration & { body?: ts.Node })[] {
  const found: (ts.SignatureDeclaration & { body?: ts.Node })[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node)) found.push(node);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A parameter typed `boolean` (or `true`/`false`, alone or in a union), or untyped with a boolean default. */
function isBoolean(parameter: ts.ParameterDeclaration): boolean {
  const booleanType = (type: ts.TypeNode): boolean =>
    type.kind === ts.SyntaxKind.BooleanKeyword ||
    (ts.isLiteralTypeNode(type) &&
      (type.literal.kind === ts.SyntaxKind.TrueKeyword || type.literal.kind === ts.SyntaxKind.FalseKeyword)) ||
    (ts.isUnionTypeNode(type) && type.types.some(booleanType)) ||
    (ts.isParenthesizedTypeNode(type) && booleanType(type.type));
  if (parameter.type !== undefined) return booleanType(parameter.type);
  const initial = parameter.initializer?.kind;
  return initial === ts.SyntaxKind.TrueKeyword || initial === ts.SyntaxKind.FalseKeyword;
}

/** Where a node stands, as `path:line` from the repository root. */
function at(source: ts.SourceFile, node: ts.Node): string {
  const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
  return `${relative(root, source.fileName)}:${line + 1}`;
}

/** The deliverer's functions that break the parameter rules, each with where it stands. */
function parameterFindings(): { tooMany: string[]; booleans: string[] } {
  const tooMany: string[] = [];
  const booleans: string[] = [];
  for (const file of tsFiles(delivererSrc)) {
    const source = parse(file);
    for (const fn of functionsOf(source)) {
      // `this` is a type annotation, not an argument the caller passes.
      const parameters = fn.parameters.filter((p) => !(ts.isIdentifier(p.name) && p.name.text === 'this'));
      if (parameters.length > MAX_PARAMETERS) tooMany.push(`${at(source, fn)} (${parameters.length} parameters)`);
      // A flag is what a caller passes: functions with a body. A type such as a promise's resolver
      // (`(moved: boolean) => void` for a `Promise<boolean>`) takes a value, not a flag.
      if (fn.body === undefined) continue;
      for (const p of parameters.filter(isBoolean)) booleans.push(`${at(source, p)} (${p.name.getText(source)})`);
    }
  }
  return { tooMany, booleans };
}

describe('structure', () => {
  it(`no function, method or arrow in the deliverer takes more than ${MAX_PARAMETERS} parameters or a boolean one`, (t) => {
    const { tooMany, booleans } = parameterFindings();
    t.diagnostic(`more than ${MAX_PARAMETERS} parameters: ${tooMany.length}; boolean parameters: ${booleans.length}`);
    assert.deepEqual(
      { tooMany, booleans },
      { tooMany: [], booleans: [] },
      'more than three parameters, or a boolean one: take an options or context object, or a named mode',
    );
  });

  it(`the deliverer's src/ has at most ${MAX_TOP_ENTRIES} entries at the top (one folder per feature)`, (t) => {
    const entries = readdirSync(delivererSrc);
    t.diagnostic(`top-level entries: ${entries.length}`);
    assert.ok(entries.length <= MAX_TOP_ENTRIES, `${entries.length} entries: ${entries.join(', ')}`);
  });

  it("no file name stands twice within a service's src/", (t) => {
    const repeated: string[] = [];
    for (const service of readdirSync(join(root, 'services'))) {
      const src = join(root, 'services', service, 'src');
      if (!existsSync(src)) continue;
      const byName = new Map<string, string[]>();
      for (const file of tsFiles(src)) byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file]);
      for (const [name, files] of byName)
        if (files.length > 1) repeated.push(`${name}: ${files.map((f) => relative(root, f)).join(', ')}`);
    }
    t.diagnostic(`file names repeated: ${repeated.length}`);
    assert.deepEqual(repeated, []);
  });

  it(`createDeliverer only wires: its body is at most ${MAX_FACTORY_LINES} lines`, (t) => {
    const source = parse(join(delivererSrc, 'service', 'deliverer.ts'));
    const factory = source.statements.find(
      (s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === 'createDeliverer',
    );
    assert.ok(factory?.body, 'createDeliverer is declared in services/deliverer/src/service/deliverer.ts');
    const start = source.getLineAndCharacterOfPosition(factory.body.getStart(source)).line;
    const end = source.getLineAndCharacterOfPosition(factory.body.getEnd()).line;
    const lines = end - start + 1;
    t.diagnostic(`createDeliverer's body: ${lines} lines`);
    assert.ok(lines <= MAX_FACTORY_LINES, `createDeliverer's body is ${lines} lines`);
  });
});
