// docs/cli.md cannot drift from the command tree: every command has a section, every flag a row
// with its default.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildProgram } from '@sluice/cli';
import type { Command } from 'commander';
import { memoryIo } from './cli-io.ts';
import { docTableRows, ROOT } from './code-facts.ts';

const doc = readFileSync(join(ROOT, 'docs/cli.md'), 'utf8');

/** The text of the `## \`sluice <path>…\`` section. */
function section(path: string): string | undefined {
  const start = doc.split('\n').findIndex((l) => l.startsWith(`## \`sluice ${path}`));
  if (start < 0) return undefined;
  const rest = doc.split('\n').slice(start + 1);
  const end = rest.findIndex((l) => l.startsWith('## '));
  return rest.slice(0, end < 0 ? undefined : end).join('\n');
}

/** `| \`--flag <v>\` | default | meaning |` rows of a section: flag → default cell. */
const rows = (text: string) => docTableRows(text, 1);

function leaves(command: Command, path: string[] = []): [string, Command][] {
  if (command.commands.length === 0) return [[path.join(' '), command]];
  return command.commands.flatMap((c) => leaves(c, [...path, c.name()]));
}

test('docs/cli.md has a section for every command and a row with its default for every flag', () => {
  const program = buildProgram(memoryIo().io);
  const commands = leaves(program);
  assert.ok(commands.length >= 6);
  for (const [path, command] of commands) {
    const text = section(path);
    assert.ok(text !== undefined, `docs/cli.md lacks a section for sluice ${path}`);
    const documented = rows(text);
    for (const option of command.options) {
      const row = documented.get(option.flags);
      assert.ok(row !== undefined, `sluice ${path}: no row for ${option.flags}`);
      assert.notEqual(row.trim(), '', `sluice ${path} ${option.flags}: the default cell is empty`);
      if (option.defaultValue !== undefined) {
        assert.ok(
          row.includes(`\`${String(option.defaultValue)}\``),
          `sluice ${path} ${option.flags}: default ${option.defaultValue} in ${row}`,
        );
      }
    }
    const stale = [...documented.keys()].filter((flags) => !command.options.some((o) => o.flags === flags));
    assert.deepEqual(stale, [], `sluice ${path}: documented flags the command does not have`);
  }
  assert.ok(doc.includes('| `-V`, `--version` |'), 'the version flag');
});
