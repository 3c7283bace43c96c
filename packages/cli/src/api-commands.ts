import { type Command, Option } from 'commander';
import { TOKEN_ROLES } from '@sluice/log-api';
import {
  type DefinitionFlags,
  definitionCreate,
  definitionDelete,
  definitionGet,
  definitionRotate,
  definitionsApply,
  definitionsExport,
  definitionUpdate,
} from './commands/definitions.ts';
import { type DestinationTestFlags, destinationTest } from './commands/destination-test.ts';
import { type PortalLinkFlags, portalLinkCreate } from './commands/portal-links.ts';
import {
  type SourceFlags,
  sourceCreate,
  sourceDelete,
  sourceGet,
  sourceMintKey,
  sourceRename,
  sourceRevokeKey,
  sourcesList,
} from './commands/sources.ts';
import { type TokenCreateFlags, tokenCreate, tokenRevoke, tokensList } from './commands/tokens.ts';
import type { CliIo } from './io.ts';
import { addLeaves, scriptable } from './leaf-commands.ts';

/**
 * The commands that manage runtime resources through the delivery log's API (SLUICE_API_URL,
 * SLUICE_API_TOKEN; docs/cli.md): destination definitions, sources and their write keys, tenant
 * tokens and portal links.
 */

const IF_MATCH_HELP =
  'the version read (`get` prints it): refused if the destination changed since; default the current one';

/** `sluice destinations create|get|update|delete|rotate-secret|test|export|apply`: destination definitions (docs/cli.md). */
export function addDefinitionCommands(io: CliIo, destinations: Command): void {
  addLeaves(destinations, [
    {
      name: 'create',
      description: 'create a runtime destination from a definition file (one entry of `destinations`, YAML or JSON)',
      required: [['-f, --file <file>', 'the definition; { env: NAME } secrets are read from the environment']],
      action: (o: DefinitionFlags & { file: string }) => definitionCreate(io, o.file, o),
    },
    {
      name: 'get',
      description: 'one destination with its version, secrets masked',
      args: [['<id>', 'destination id']],
      action: (id: string, o: DefinitionFlags) => definitionGet(io, id, o),
    },
    {
      name: 'update',
      description: 'replace a runtime destination (-f) or change part of it (--patch, a JSON Merge Patch)',
      args: [['<id>', 'destination id']],
      options: [
        ['-f, --file <file>', 'the whole new definition'],
        ['--patch <file>', 'a JSON Merge Patch: objects merge, null removes, lists replace'],
        ['--if-match <version>', IF_MATCH_HELP],
      ],
      action: (id: string, o: DefinitionFlags & { file?: string; patch?: string }) => definitionUpdate(io, id, o),
    },
    {
      name: 'delete',
      description: 'delete a runtime destination',
      args: [['<id>', 'destination id']],
      options: [['--if-match <version>', IF_MATCH_HELP]],
      action: (id: string, o: DefinitionFlags) => definitionDelete(io, id, o),
    },
    {
      name: 'rotate-secret',
      description: 'give a signing scheme a new secret (printed once); the old one keeps signing for the overlap',
      args: [['<id>', 'destination id']],
      options: [
        ['--scheme <scheme>', 'x-signature or standard-webhooks (default x-signature)'],
        ['--overlap-ms <ms>', 'how long the old secret keeps signing (default 24 h)'],
        ['--if-match <version>', IF_MATCH_HELP],
      ],
      action: (id: string, o: DefinitionFlags & { scheme?: string; overlapMs?: string }) => definitionRotate(io, id, o),
    },
    {
      name: 'test',
      description: 'send one signed test event to an endpoint of a destination and print what it answered',
      args: [['<id>', 'destination id']],
      options: [['--endpoint <index>', "the endpoint's index in the destination (default 0, the first)"]],
      action: (id: string, o: DestinationTestFlags) => destinationTest(io, id, o),
    },
    {
      name: 'export',
      description: "the runtime destinations in the config file's format; secrets as { env: NAME }",
      action: (o: { json?: boolean }) => definitionsExport(io, o),
    },
    {
      name: 'apply',
      description: "make the runtime destinations match a file's destinations (create, update, delete), diff first",
      required: [['-f, --file <file>', 'a file with `destinations` (what export prints)']],
      options: [['--dry-run', 'print the diff, change nothing']],
      action: (o: { file: string; dryRun?: boolean; json?: boolean }) => definitionsApply(io, o.file, o),
    },
  ]);
}

const SOURCE_IF_MATCH_HELP =
  'the version read (`get` prints it): refused if the source changed since; default the current one';

/** `sluice tokens create|list|revoke`: tenant tokens of the delivery log's API (docs/reference/tokens.md), the admin's. */
export function addTokenCommands(io: CliIo, program: Command): void {
  const tokens = program
    .command('tokens')
    .description("tenant tokens of the delivery log's API (SLUICE_API_URL, SLUICE_API_TOKEN: the admin token)");
  scriptable(tokens, 'create')
    .description('create a tenant token; the token is printed once')
    .argument('<name>', 'its name, unique among the tokens in force: what it does is recorded by it')
    .requiredOption('--tenant <tenant>', 'the tenant it sees and changes')
    .addOption(
      new Option('--role <role>', 'read, or manage (also changes, acts and replays)')
        .choices(TOKEN_ROLES)
        .makeOptionMandatory(),
    )
    .option('--expires-at <time>', 'RFC 3339 time from which it is refused (default: never)')
    .action((name: string, o: TokenCreateFlags) => tokenCreate(io, name, o));
  addLeaves(tokens, [
    {
      name: 'list',
      description: 'the tenant tokens in force: ids, names, tenants, roles, expiries; never a token',
      action: (o: { json?: boolean }) => tokensList(io, o),
    },
    {
      name: 'revoke',
      description: 'revoke a tenant token: every delivery-log replica refuses it within a second',
      args: [['<id>', 'the token id (tok_…) as list shows it']],
      action: (id: string, o: { json?: boolean }) => tokenRevoke(io, id, o),
    },
  ]);
}

/** `sluice portal-links create`: a signed, expiring link to one tenant's view of the console (docs/reference/portal-links.md). */
export function addPortalLinkCommands(io: CliIo, program: Command): void {
  const links = program
    .command('portal-links')
    .description("portal links to one tenant's view of the console (SLUICE_API_URL, SLUICE_API_TOKEN)");
  addLeaves(links, [
    {
      name: 'create',
      description: "mint a portal link: the console's URL with the link is printed",
      options: [
        ['--tenant <tenant>', 'the tenant it shows (the admin names one; a manage token mints for its own)'],
        ['--destination <id>', "one of the tenant's destinations: the link then shows that one only"],
        ['--ttl-ms <ms>', 'how long it lives, 1000 to 86400000 ms (default: 1 hour)'],
      ],
      action: (o: PortalLinkFlags) => portalLinkCreate(io, o),
    },
  ]);
}

/** `sluice sources create|get|list|rename|delete|mint-key|revoke-key`: runtime sources and their write keys (docs/cli.md). */
export function addSourceCommands(io: CliIo, program: Command): void {
  const sources = program
    .command('sources')
    .description("sources and their write keys through the delivery log's API (SLUICE_API_URL, SLUICE_API_TOKEN)");
  addLeaves(sources, [
    {
      name: 'list',
      description: "every source: the file's (read-only, keys never shown) and the runtime ones with their key ids",
      action: (o: { json?: boolean }) => sourcesList(io, o),
    },
    {
      name: 'get',
      description: 'one source with its version; its write keys by id and times, never the keys',
      args: [['<id>', 'source id']],
      action: (id: string, o: SourceFlags) => sourceGet(io, id, o),
    },
    {
      name: 'create',
      description: 'create a runtime source; its first write key is printed once',
      args: [['<id>', 'source id ([A-Za-z0-9._-], at most 200)']],
      options: [['--name <name>', 'display name (default empty)']],
      action: (id: string, o: SourceFlags & { name?: string }) => sourceCreate(io, id, o),
    },
    {
      name: 'rename',
      description: 'give a runtime source a new name',
      args: [
        ['<id>', 'source id'],
        ['<name>', 'the new name'],
      ],
      options: [['--if-match <version>', SOURCE_IF_MATCH_HELP]],
      action: (id: string, name: string, o: SourceFlags) => sourceRename(io, id, { ...o, name }),
    },
    {
      name: 'delete',
      description: 'delete a runtime source (refused while a destination names it)',
      args: [['<id>', 'source id']],
      options: [['--if-match <version>', SOURCE_IF_MATCH_HELP]],
      action: (id: string, o: SourceFlags) => sourceDelete(io, id, o),
    },
    {
      name: 'mint-key',
      description: 'mint a new write key for a runtime source (printed once); the others stay in force',
      args: [['<id>', 'source id']],
      options: [['--if-match <version>', SOURCE_IF_MATCH_HELP]],
      action: (id: string, o: SourceFlags) => sourceMintKey(io, id, o),
    },
    {
      name: 'revoke-key',
      description: 'revoke a write key of a runtime source: ingest refuses it within a second',
      args: [
        ['<id>', 'source id'],
        ['<keyId>', 'the key id (wk_…) as get and list show it'],
      ],
      options: [['--if-match <version>', SOURCE_IF_MATCH_HELP]],
      action: (id: string, keyId: string, o: SourceFlags) => sourceRevokeKey(io, id, { ...o, keyId }),
    },
  ]);
}
