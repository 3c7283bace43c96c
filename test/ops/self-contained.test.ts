// The repository stands on its own: nothing in it reads or cites files outside it, it carries its
// licence, its docs describe the product rather than how it was made, and the reference pages exist
// and link only to files that exist.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { ROOT } from './code-facts.ts';

/** Written in pieces so that this file does not contain what it looks for. */
const OUTSIDE_PATH = ['..', 'shared'].join('/');
const OUTSIDE_CITATION = ['SPE', 'C §'].join('');

/** Byte-identical copies of the contract's published vectors; their `about` texts keep its wording. */
const VERBATIM_VECTORS = /^test\/vectors\/[^/]+\.json$/;

const TEXT_FILE = /(\.(ts|mts|cts|js|mjs|cjs|md|go|sh|ya?ml|json|txt)|Dockerfile|LICENSE)$/;

/** Tracked files (git), or every file outside node_modules and .git when there is no git checkout. */
function repositoryFiles(): string[] {
  const git = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' });
  if (git.status === 0 && git.stdout.length > 0) {
    return git.stdout.split('\0').filter((f) => f !== '' && existsSync(join(ROOT, f)));
  }
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === '.git') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(ROOT, path));
    }
  };
  walk(ROOT);
  return out;
}

const files = repositoryFiles().filter((f) => TEXT_FILE.test(f) && !f.split('/').includes('node_modules'));
const docs = files.filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')));
const read = (f: string): string => readFileSync(join(ROOT, f), 'utf8');

function linesContaining(needle: string, skip: RegExp | undefined): string[] {
  const hits: string[] = [];
  for (const f of files) {
    if (skip?.test(f)) continue;
    read(f)
      .split('\n')
      .forEach((line, i) => {
        if (line.includes(needle)) hits.push(`${f}:${i + 1}: ${line.trim()}`);
      });
  }
  return hits;
}

test('the file list covers the repository (sources, docs, scripts, manifests)', () => {
  for (const f of ['README.md', 'package.json', 'packages/testkit/src/vectors.ts', 'docs/reference/README.md']) {
    assert.ok(files.includes(f), `${f} is not among the checked files`);
  }
});

test('no file reads or links the folder beside the repository', () => {
  assert.deepEqual(linesContaining(OUTSIDE_PATH, undefined), []);
});

test('no file cites sections of the outside contract (only the verbatim vectors keep its wording)', () => {
  assert.deepEqual(linesContaining(OUTSIDE_CITATION, VERBATIM_VECTORS), []);
});

test('LICENSE is the MIT licence of the Sluice authors, and every package.json declares MIT', () => {
  const licence = read('LICENSE');
  assert.match(licence, /^MIT License\n/);
  assert.match(licence, /Copyright \(c\) 2026 The Sluice authors/);
  const manifests = files.filter((f) => f === 'package.json' || f.endsWith('/package.json'));
  assert.ok(manifests.length > 10, `only ${manifests.length} package.json files found`);
  for (const f of manifests) assert.equal((JSON.parse(read(f)) as { license?: string }).license, 'MIT', f);
});

/** Phrases that narrate how the project was made rather than what it does. */
const HISTORY_PHRASES: RegExp[] = [
  /\bsessions? \d/i,
  /\b(first|second|third|fourth|fifth|sixth|previous|last) session\b/i,
  /\bsince session\b/i,
  /\bmet since\b/i,
  /^History:/m,
  /\bGoals are the issues/i,
  /\bchosen by the user\b/i,
  /\btried,? (and )?not kept\b/i,
  /\bthe issue names\b/i,
  /\bwhat was tried\b/i,
];

test('README and docs describe the product, not how it was made', () => {
  const found: string[] = [];
  for (const f of docs) {
    const text = read(f);
    for (const phrase of HISTORY_PHRASES) {
      const m = phrase.exec(text);
      if (m) found.push(`${f}: "${m[0]}"`);
    }
  }
  assert.deepEqual(found, []);
});

const REFERENCE_PAGES = [
  'README.md',
  'overview.md',
  'tracking-api.md',
  'envelope.md',
  'routing.md',
  'delivery.md',
  'retries.md',
  'audiences.md',
  'deletions.md',
  'clients.md',
  'observability.md',
  'security.md',
  'limits.md',
  'operating-interface.md',
];

test('docs/reference has every page, the README links its index, and the pages speak only of the product', () => {
  for (const page of REFERENCE_PAGES) {
    assert.ok(existsSync(join(ROOT, 'docs/reference', page)), `docs/reference/${page}`);
  }
  assert.match(read('README.md'), /\]\(docs\/reference\/README\.md\)/);
  for (const page of REFERENCE_PAGES) {
    const text = read(`docs/reference/${page}`);
    const outsideWords = /\bspec(ification)?\b|source document|\bissues?\b|\bsession\b/i;
    assert.doesNotMatch(text, outsideWords, `docs/reference/${page}`);
  }
});

test('every relative link in README and docs points at a file that exists', () => {
  const broken: string[] = [];
  for (const f of docs) {
    for (const m of read(f).matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/i.test(target)) continue;
      if (!existsSync(resolve(ROOT, dirname(f), target))) broken.push(`${f}: ${target}`);
    }
  }
  assert.deepEqual(broken, []);
});
