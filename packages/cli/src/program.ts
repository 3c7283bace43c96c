import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from '@sluice/config';
import { configValidate } from './commands/config-validate.ts';
import { dlqList, dlqReplay } from './commands/dlq.ts';
import { send } from './commands/send.ts';
import { topics } from './commands/topics.ts';
import { verify } from './commands/verify.ts';
import { CALL_TYPES, type CallType } from './domain/test-call.ts';
import { CliError, type CliIo } from './io.ts';

function jsonObject(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('must be a JSON object');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new InvalidArgumentError('must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** The dead-letter filter options shared by `dlq list` and `dlq replay`. */
function withDlqFilters(command: Command): Command {
  return command
    .option('--config <file>', 'config file (default: SLUICE_CONFIG, else the bundled demo config)')
    .option('--destination <id>', 'only dead letters of this destination')
    .option('--source <id>', 'only dead letters of this source')
    .option('--reason <reason>', 'only dead letters with this reason (window_exhausted, permanent_failure, …)')
    .option('--since <time>', 'only dead letters that died at or after this ISO 8601 time')
    .option('--until <time>', 'only dead letters that died before this ISO 8601 time');
}

/** The `sluice` command tree (SPEC §14). */
export function buildProgram(io: CliIo): Command {
  const program = new Command('sluice')
    .description('Sluice operator tool: validate a config, send a test event, dead letters, signatures, topics.')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });

  const config = program.command('config').description('configuration files');
  config
    .command('validate')
    .description('validate a config file; exit 1 with the error naming the field')
    .argument('<file>', 'YAML or JSON config file')
    .action((file: string) => configValidate(io, file));

  program
    .command('send')
    .description('send one test call to ingest')
    .option('--endpoint <url>', 'ingest base URL', 'http://localhost:8080')
    .requiredOption('--write-key <key>', "the source's write key")
    .addOption(new Option('--type <type>', 'call type').choices(CALL_TYPES).default('track'))
    .option('--event <name>', 'event name (track)')
    .option('--user-id <id>', 'userId (default sluice-cli)')
    .option('--anonymous-id <id>', 'anonymousId')
    .option('--group-id <id>', 'groupId (group)')
    .option('--previous-id <id>', 'previousId (alias)')
    .option('--name <name>', 'page or screen name')
    .option(
      '--properties <json>',
      'properties (track, page, screen) or traits (identify, group) as a JSON object',
      jsonObject,
    )
    .action((o: Record<string, unknown>) =>
      send(io, {
        endpoint: o.endpoint as string,
        writeKey: o.writeKey as string,
        type: o.type as CallType,
        ...(o.event !== undefined && { event: o.event as string }),
        ...(o.userId !== undefined && { userId: o.userId as string }),
        ...(o.anonymousId !== undefined && { anonymousId: o.anonymousId as string }),
        ...(o.groupId !== undefined && { groupId: o.groupId as string }),
        ...(o.previousId !== undefined && { previousId: o.previousId as string }),
        ...(o.name !== undefined && { name: o.name as string }),
        ...(o.properties !== undefined && { properties: o.properties as Record<string, unknown> }),
      }),
    );

  const dlq = program.command('dlq').description('dead letters (KAFKA_BROKERS)');
  withDlqFilters(dlq.command('list').description('list dead letters'))
    .option('--json', 'one JSON object per line')
    .action((o: Record<string, string | boolean | undefined>) => dlqList(io, o));
  withDlqFilters(dlq.command('replay').description('re-inject dead letters with a fresh retry window'))
    .option('--dry-run', 'only count what would be replayed')
    .action((o: Record<string, string | boolean | undefined>) => dlqReplay(io, o));

  program
    .command('verify')
    .description('check an X-Signature against the body on stdin: sluice verify --secret S --signature H < body.json')
    .requiredOption('--secret <secret>', "the destination's shared secret")
    .requiredOption('--signature <hex>', 'the X-Signature header value')
    .action((o: { secret: string; signature: string }) => verify(io, o));

  program
    .command('topics')
    .description("describe the config's topics on KAFKA_BROKERS; --create creates the missing ones")
    .option('--config <file>', 'config file (default: SLUICE_CONFIG, else the bundled demo config)')
    .option('--create', 'create missing topics first')
    .option('--json', 'JSON output')
    .action((o: { config?: string; create?: boolean; json?: boolean }) => topics(io, o));

  return program;
}

/** Runs the CLI; resolves with the exit code instead of exiting (tests call this in-process). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof CliError) {
      io.stderr(`${err.message}\n`);
      return err.exitCode;
    }
    if (err instanceof ConfigError) {
      io.stderr(`invalid configuration: ${err.message}\n`);
      return 1;
    }
    io.stderr(`sluice: ${(err as Error).message}\n`);
    return 1;
  }
}
