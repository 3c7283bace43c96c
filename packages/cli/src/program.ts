import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from '@sluice/config';
import { configValidate } from './commands/config-validate.ts';
import {
  DESTINATION_ACTIONS,
  destinationAction,
  destinationsList,
  type DestinationActionFlags,
} from './commands/destinations.ts';
import { type AuditFlags, audit } from './commands/audit.ts';
import { dlqList, dlqReplay, type DlqListFlags, type DlqReplayFlags } from './commands/dlq.ts';
import { send } from './commands/send.ts';
import { topics } from './commands/topics.ts';
import { verify, type VerifyOptions } from './commands/verify.ts';
import { CALL_TYPES, DEFAULT_TEST_EVENT, DEFAULT_TEST_USER, type CallType } from './domain/test-call.ts';
import { VERIFY_SCHEMES } from './domain/verify-request.ts';
import { addDefinitionCommands, addPortalLinkCommands, addSourceCommands, addTokenCommands } from './api-commands.ts';
import { CliError, type CliIo } from './io.ts';
import { scriptable } from './leaf-commands.ts';
import { readSecret } from './secret-input.ts';
import packageJson from '../package.json' with { type: 'json' };

/** The CLI's version, as its package.json says (`sluice --version`). */
export const CLI_VERSION: string = packageJson.version;

const CONFIG_HELP = 'config file (default: SLUICE_CONFIG; one of the two is required)';

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

function positiveInteger(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

/** The dead-letter filter options shared by `dlq list` and `dlq replay`. */
function withDlqFilters(command: Command): Command {
  return command
    .option('--config <file>', CONFIG_HELP)
    .option('--destination <id>', 'only dead letters of this destination')
    .option('--source <id>', 'only dead letters of this source')
    .option(
      '--reason <reason>',
      'only dead letters with this reason (window_exhausted, permanent_failure, no_endpoints, destination_deleted, …)',
    )
    .option('--since <time>', 'only dead letters that died at or after this time (ISO 8601 or epoch ms)')
    .option('--until <time>', 'only dead letters that died before this time (ISO 8601 or epoch ms)');
}

/** The `sluice` command tree (docs/reference/operating-interface.md). */
export function buildProgram(io: CliIo): Command {
  const program = new Command('sluice')
    .description(
      'Sluice operator tool: validate a config, send a test event, dead letters, signatures, topics, destination state.',
    )
    .version(CLI_VERSION, '-V, --version', 'print the version')
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
    .description(
      'send one test call to ingest (the write key from exactly one of --write-key-env, --write-key-file, --write-key)',
    )
    .option('--endpoint <url>', 'ingest base URL', 'http://localhost:8080')
    .option('--write-key-env <name>', "read the source's write key from this environment variable")
    .option('--write-key-file <path>', "read the source's write key from this file (one trailing newline dropped)")
    .option('--write-key <key>', "the source's write key on the command line (visible in ps and shell history)")
    .addOption(new Option('--type <type>', 'call type').choices(CALL_TYPES).default('track'))
    .option('--event <name>', `event name (track; default ${JSON.stringify(DEFAULT_TEST_EVENT)})`)
    .option('--user-id <id>', `userId (default ${DEFAULT_TEST_USER}, unless only --anonymous-id is given)`)
    .option('--anonymous-id <id>', 'anonymousId')
    .option('--group-id <id>', 'groupId (group; default sluice-test-group)')
    .option('--previous-id <id>', 'previousId (alias; default sluice-cli-previous)')
    .option('--name <name>', 'page or screen name (default "Sluice Test")')
    .option(
      '--properties <json>',
      'properties (track, page, screen) or traits (identify, group) as a JSON object ' +
        '(default {"source":"sluice send"})',
      jsonObject,
    )
    .action((o: Record<string, unknown>) =>
      send(io, {
        endpoint: o.endpoint as string,
        writeKey: readSecret(io, 'write-key', {
          ...(o.writeKey !== undefined && { value: o.writeKey as string }),
          ...(o.writeKeyEnv !== undefined && { env: o.writeKeyEnv as string }),
          ...(o.writeKeyFile !== undefined && { file: o.writeKeyFile as string }),
        }),
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
  withDlqFilters(dlq.command('list').description('stream the dead letters, one line each, as they are read'))
    .option('--limit <n>', 'stop after this many dead letters (default: no limit)', positiveInteger)
    .option('--json', 'one JSON object per line (with the body) instead of a summary line')
    .action((o: DlqListFlags) => dlqList(io, o));
  withDlqFilters(
    dlq
      .command('replay')
      .description('re-inject dead letters with a fresh retry window; needs a filter or --all, shows the plan first'),
  )
    .option('--all', 'replay every dead letter (instead of a filter)')
    .option('--dry-run', 'show the plan and the dead letters it would replay; write nothing')
    .option('--yes', 'do not ask for confirmation on a terminal')
    .action((o: DlqReplayFlags) => dlqReplay(io, o));

  program
    .command('verify')
    .description(
      'check an X-Signature or a Standard Webhooks signature against the body on stdin: ' +
        'sluice verify --secret-env NAME --signature H [--batch-id B] < body.json',
    )
    .option('--secret-env <name>', 'read the secret (shared secret, or whsec_ secret) from this environment variable')
    .option('--secret-file <path>', 'read the secret from a file (one trailing newline dropped)')
    .option('--secret <secret>', 'the secret itself (visible in ps and shell history)')
    .requiredOption('--signature <value>', 'the X-Signature or webhook-signature header value')
    .addOption(
      new Option('--scheme <scheme>', 'signature scheme (default: standard-webhooks for a v1, signature)').choices(
        VERIFY_SCHEMES,
      ),
    )
    .option('--webhook-id <id>', 'the webhook-id header value (Standard Webhooks)')
    .option('--webhook-timestamp <seconds>', 'the webhook-timestamp header value (Standard Webhooks)')
    .option('--tolerance <duration>', 'how far webhook-timestamp may be from now, either way', '5m')
    .option('--batch-id <id>', 'the X-Batch-Id header value: check the body as a batch and print its message ids')
    .option(
      '--batch-size <n>',
      'the X-Batch-Size header value: the number of events the body must hold',
      positiveInteger,
    )
    .action((o: Omit<VerifyOptions, 'secret'> & { secret?: string; secretEnv?: string; secretFile?: string }) =>
      verify(io, {
        secret: readSecret(io, 'secret', {
          ...(o.secret !== undefined && { value: o.secret }),
          ...(o.secretEnv !== undefined && { env: o.secretEnv }),
          ...(o.secretFile !== undefined && { file: o.secretFile }),
        }),
        signature: o.signature,
        ...(o.scheme !== undefined && { scheme: o.scheme }),
        ...(o.webhookId !== undefined && { webhookId: o.webhookId }),
        ...(o.webhookTimestamp !== undefined && { webhookTimestamp: o.webhookTimestamp }),
        ...(o.tolerance !== undefined && { tolerance: o.tolerance }),
        ...(o.batchId !== undefined && { batchId: o.batchId }),
        ...(o.batchSize !== undefined && { batchSize: o.batchSize }),
      }),
    );

  scriptable(program, 'topics')
    .description("describe the config's topics on KAFKA_BROKERS; --create creates the missing ones")
    .option('--config <file>', CONFIG_HELP)
    .option('--create', 'create missing topics first')
    .action((o: { config?: string; create?: boolean; json?: boolean }) => topics(io, o));

  const destinations = program
    .command('destinations')
    .description("destinations' runtime state through the delivery log's API (SLUICE_API_URL, SLUICE_API_TOKEN)");
  scriptable(destinations, 'list')
    .description('each destination and endpoint with its state: active, paused or disabled (reason, by, since)')
    .action((o: { json?: boolean }) => destinationsList(io, o));
  addDefinitionCommands(io, destinations);
  for (const action of DESTINATION_ACTIONS) {
    scriptable(destinations, action)
      .description(`${action} a destination, or one endpoint of it with --endpoint`)
      .argument('<id>', 'destination id')
      .option('--endpoint <ref>', 'only this endpoint, named as `destinations list` shows it')
      .requiredOption('--reason <text>', 'why (recorded with the action)')
      .action((id: string, o: DestinationActionFlags) => destinationAction(io, action, id, o));
  }

  addSourceCommands(io, program);
  addTokenCommands(io, program);
  addPortalLinkCommands(io, program);

  program
    .command('audit')
    .description(
      "the delivery log's ledger per source and destination, and what is unaccounted for (SLUICE_API_URL, SLUICE_API_TOKEN)",
    )
    .option('--from <time>', 'received at or after: ISO 8601 with offset, or epoch ms (default: an hour before --to)')
    .option('--to <time>', 'received before (default: now)')
    .option('--source <id>', 'only this source')
    .option('--destination <id>', 'only this destination')
    .option('--json', 'JSON output: the two API answers')
    .action((o: AuditFlags) => audit(io, o));

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
