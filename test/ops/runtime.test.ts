// The runtime choice, held in one place each and checked against the others: the supported Node
// (engines, the pinned `node` devDependency that `npm start`/`npm test` run on, @types/node, the
// image's base), type stripping instead of a loader, and the image's stages, user and command.
// No Docker engine runs here, so the Dockerfile is parsed.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { serviceNodeArgs } from '@sluice/service-kit';
import { ROOT } from './code-facts.ts';

/** The oldest supported Node major; 26 is supported too. */
const BASELINE_MAJOR = 24;

interface PackageJson {
  name: string;
  engines?: { node?: string };
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  allowScripts?: Record<string, boolean>;
}

const readJson = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as PackageJson;
const root = readJson('package.json');
const workspaces = ['packages', 'services'].flatMap((dir) =>
  readdirSync(join(ROOT, dir)).map((name) => ({
    path: `${dir}/${name}/package.json`,
    pkg: readJson(`${dir}/${name}/package.json`),
  })),
);

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  base: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** The Dockerfile's stages: comments dropped, continuation lines joined, one entry per instruction. */
function dockerfileStages(text: string): Stage[] {
  const lines = text.split('\n').filter((line) => !/^\s*#/.test(line));
  const instructions = lines
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [base = '', as, name] = instruction.args.split(/\s+/);
      stages.push({ base, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else {
      assert.ok(stages.length > 0, `${instruction.keyword} before the first FROM`);
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return stages;
}

const stages = dockerfileStages(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const final = stages.at(-1)!;
const all = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);

test('this test run is on a supported Node, the one `npm test` brings', () => {
  const major = Number(process.versions.node.split('.')[0]);
  assert.ok(major >= BASELINE_MAJOR, `running on Node ${process.versions.node}`);
});

test(`every package.json declares engines.node >=${BASELINE_MAJOR}`, () => {
  for (const { path, pkg } of [{ path: 'package.json', pkg: root }, ...workspaces]) {
    assert.equal(pkg.engines?.node, `>=${BASELINE_MAJOR}`, path);
  }
});

test('the root pins the npm package `node` at the baseline major and lets exactly its install script run', () => {
  const pinned = root.devDependencies?.node;
  assert.match(pinned ?? '', /^\d+\.\d+\.\d+$/, 'an exact version, so every clone runs the same Node');
  assert.equal(Number(pinned!.split('.')[0]), BASELINE_MAJOR);
  // The script is what puts the binary in node_modules/.bin/node.
  assert.equal(root.allowScripts?.node, true);
  for (const [name, allowed] of Object.entries(root.allowScripts ?? {})) {
    if (name !== 'node') assert.equal(allowed, false, `${name}: only the Node package's install script is allowed`);
  }
  assert.match(root.devDependencies?.['@types/node'] ?? '', new RegExp(`^\\^${BASELINE_MAJOR}\\.`));
  const check = readFileSync(join(ROOT, 'scripts/lib/node-runtime.sh'), 'utf8');
  assert.match(check, new RegExp(`^SLUICE_MIN_NODE_MAJOR=${BASELINE_MAJOR}$`, 'm'));
  for (const script of ['scripts/start.sh', 'scripts/test.sh']) {
    assert.match(readFileSync(join(ROOT, script), 'utf8'), /^source scripts\/lib\/node-runtime\.sh$/m, script);
  }
});

test('no TypeScript loader: tsx is no dependency, and no script or start command loads one', () => {
  for (const { path, pkg } of [{ path: 'package.json', pkg: root }, ...workspaces]) {
    assert.equal(pkg.dependencies?.tsx ?? pkg.devDependencies?.tsx, undefined, `${path} depends on tsx`);
    for (const [name, command] of Object.entries(pkg.scripts ?? {})) {
      assert.doesNotMatch(command, /--import\s+tsx|--loader|ts-node/, `${path} scripts.${name}`);
    }
  }
  const tsconfig = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'));
  assert.equal(tsconfig.compilerOptions.erasableSyntaxOnly, true);
  assert.equal(tsconfig.compilerOptions.verbatimModuleSyntax, true);
});

test('the image: a dependency stage and a runtime stage, both on node:<baseline>-slim', () => {
  assert.ok(stages.length >= 2, 'multi-stage');
  for (const stage of stages) assert.equal(stage.base, `node:${BASELINE_MAJOR}-slim`, `stage ${stage.name}`);
  const deps = stages.find((s) => all(s, 'RUN').some((r) => /\bnpm ci\b/.test(r.args)));
  assert.ok(deps && deps !== final, 'dependencies are installed in a stage of their own');
  const install = all(deps, 'RUN').find((r) => /\bnpm ci\b/.test(r.args))!.args;
  assert.match(install, /--omit=dev\b/, 'production dependencies only');
  assert.doesNotMatch(install, /--include=dev\b/);
  assert.ok(
    all(final, 'COPY').some((c) => c.args.includes(`--from=${deps.name}`)),
    'the runtime stage takes the installed tree from the dependency stage',
  );
  assert.equal(all(final, 'RUN').length, 0, 'nothing is installed or built in the runtime stage');
  assert.deepEqual(
    all(final, 'ENV').map((e) => e.args),
    ['NODE_ENV=production'],
  );
});

test('the image runs as a non-root user given by number, with no HEALTHCHECK (Kubernetes probes decide)', () => {
  const users = all(final, 'USER');
  assert.equal(users.length, 1);
  const [uid, gid] = users[0]!.args.split(':');
  assert.match(uid ?? '', /^\d+$/, 'numeric, so runAsNonRoot can verify it');
  assert.notEqual(Number(uid), 0);
  if (gid !== undefined) assert.notEqual(Number(gid), 0);
  assert.ok(stages.every((s) => all(s, 'HEALTHCHECK').length === 0));
});

test("the image's command starts ingest with plain node: its flags, then its TypeScript entry", () => {
  const cmds = all(final, 'CMD');
  assert.equal(cmds.length, 1);
  assert.deepEqual(JSON.parse(cmds[0]!.args), ['node', ...serviceNodeArgs('ingest')]);
  assert.equal(all(final, 'ENTRYPOINT').length, 0, 'compose and Kubernetes commands replace CMD alone');
});

test('the build context leaves out node_modules (the host Node binary with it), tests and docs', () => {
  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim());
  for (const entry of ['**/node_modules', '**/test', 'test', 'docs', 'bench'])
    assert.ok(ignored.includes(entry), entry);
});

test('the lockfile holds every optional dependency of what it locks, so `npm ci` accepts it on any platform', () => {
  // `npm install` leaves out an optional platform package the registry does not serve; `npm ci`
  // then refuses the lockfile as out of sync with package.json.
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { optionalDependencies?: Record<string, string> }>;
  };
  const missing: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) {
      // Resolution walks up from the package's own node_modules to the root's.
      const candidates = [`${path}/node_modules/${dep}`];
      for (let at = path.lastIndexOf('/node_modules/'); at >= 0; at = path.lastIndexOf('/node_modules/', at - 1)) {
        candidates.push(`${path.slice(0, at)}/node_modules/${dep}`);
      }
      candidates.push(`node_modules/${dep}`);
      if (!candidates.some((c) => lock.packages[c])) missing.push(`${path || '(root)'} → ${dep}`);
    }
  }
  assert.deepEqual(missing, []);
});
