import type { Command } from 'commander';

/** A subcommand of `parent` whose answer can be printed as JSON for scripts (`--json`). */
export function scriptable(parent: Command, name: string): Command {
  return parent.command(name).option('--json', 'JSON output');
}

/** A scriptable subcommand as data: its arguments and options as [flags, help], and what it runs. */
export interface Leaf {
  name: string;
  description: string;
  args?: [string, string][];
  required?: [string, string][];
  options?: [string, string][];
  action: Parameters<Command['action']>[0];
}

/** Adds each of `leaves` under `parent` (`scriptable`: each takes `--json`). */
export function addLeaves(parent: Command, leaves: Leaf[]): void {
  for (const leaf of leaves) {
    const command = scriptable(parent, leaf.name).description(leaf.description);
    for (const [flags, help] of leaf.args ?? []) command.argument(flags, help);
    for (const [flags, help] of leaf.required ?? []) command.requiredOption(flags, help);
    for (const [flags, help] of leaf.options ?? []) command.option(flags, help);
    command.action(leaf.action);
  }
}
