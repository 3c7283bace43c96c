import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadVector } from '@sluice/testkit';
import { snakeCase } from '../src/domain/snake-case.ts';

const vector = loadVector<{ cases: [string, string][] }>('snake_case.json');

test('snakeCase matches every case of test/vectors/snake_case.json', () => {
  assert.ok(vector.cases.length >= 8);
  for (const [name, expected] of vector.cases) assert.equal(snakeCase(name), expected, name);
});

test('snakeCase of a name without letters or digits is empty (rejected by validation)', () => {
  assert.equal(snakeCase(' -- () '), '');
});
