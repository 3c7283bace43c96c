import { parseDuration } from './duration.ts';
import { resolveEndpoints } from './endpoints.ts';
import { ConfigError } from './errors.ts';
import { subField } from './field-path.ts';
import { resolveFilter } from './filter.ts';
import { ajv, schemaError } from './schema-errors.ts';
import { DestinationSchema, type RawConfig } from './schema.ts';
import { type ResolveSecret, secretResolver } from './secrets.ts';
import { checkDestination, DestinationIds, type SourcesInForce } from './semantic-checks.ts';
import { resolveSigning } from './signing.ts';
import type { Destination } from './types.ts';

/** One entry of the config file's `destinations` list, as the schema leaves it (defaults filled in). */
export type DestinationDefinition = RawConfig['destinations'][number];

const validate = ajv.compile<DestinationDefinition>(DestinationSchema);

/**
 * A destination with its secrets resolved and checked, durations in milliseconds: what the file's
 * `destinations` become and what `validateDestination` gives. Fields are named below `base`.
 */
export function resolveDestination(d: DestinationDefinition, base: string, secret: ResolveSecret): Destination {
  return {
    id: d.id,
    name: d.name,
    tenant: d.tenant,
    type: d.type,
    enabled: d.enabled,
    sourceIds: d.sourceIds,
    endpoints: resolveEndpoints(d, base, secret),
    ...(d.settings.sharedSecret !== undefined && {
      sharedSecret: secret(subField(base, 'settings.sharedSecret'), d.settings.sharedSecret),
    }),
    signing: resolveSigning(d, base, secret),
    ...(d.batch !== undefined && {
      batch: { maxEvents: d.batch.maxEvents, maxBytes: d.batch.maxBytes, maxWaitMs: parseDuration(d.batch.maxWait) },
    }),
    ...(d.filter !== undefined && { filter: resolveFilter(d.filter, subField(base, 'filter')) }),
    ...(d.ordering === 'per-user' && { ordering: { onDeadLetter: d.orderingOnDeadLetter } }),
  };
}

/** What one destination is validated against besides itself (`validateDestination`). */
export interface DestinationContext {
  /**
   * The sources it may name in `sourceIds`: the sources in force, the file's and the runtime ones
   * (docs/reference/runtime-sources.md); undefined: not checked (a record read back, before it
   * meets the config in force). A set is used as it is (no copy per destination when many are checked);
   * a map of each source's tenant also holds the destination to sources of its own tenant.
   */
  sourceIds?: readonly string[] | SourcesInForce;
  /**
   * The ids of the other destinations, which its id must neither repeat nor match but for `.` and
   * `_`; default none. A `DestinationIds` is used as it is, so checking many costs a lookup each.
   */
  destinationIds?: readonly string[] | DestinationIds;
  /**
   * Where `{ env }` secrets are read; `{ file }` secrets are then read too, as in the file. Absent
   * (default): both are refused naming the field, so a definition that did not come from the
   * config file cannot read the host's variables or files into a URL or a header it sends.
   */
  env?: NodeJS.ProcessEnv;
}

/** A resolver that takes literal secrets only. */
const literalSecret: ResolveSecret = (field, secret) => {
  if (typeof secret === 'string') return secret;
  throw new ConfigError(field, 'must be the secret itself: { env } and { file } are read only in the config file');
};

/**
 * Validates one destination definition — the shape of one entry of the file's `destinations` — by
 * the rules the file is held to: the same schema, the same checks, the same messages, each field
 * named relative to the destination (`settings.webhooks[1].url`, where the file says
 * `destinations[0].settings.webhooks[1].url`). Throws `ConfigError`. Returns the definition as the
 * schema leaves it (defaults filled in; `input` is not changed) and the destination it resolves to.
 */
export function validateDestination(
  input: unknown,
  context: DestinationContext = {},
): { definition: DestinationDefinition; destination: Destination } {
  const definition = structuredClone(input) as DestinationDefinition;
  if (!validate(definition)) throw schemaError(validate.errors ?? []);
  const taken = context.destinationIds ?? [];
  (taken instanceof DestinationIds ? taken : new DestinationIds(taken)).check('id', definition.id);
  const sourceIds = context.sourceIds;
  checkDestination(definition, '', Array.isArray(sourceIds) ? new Set(sourceIds) : (sourceIds as SourcesInForce));
  const secret = context.env === undefined ? literalSecret : secretResolver(context.env);
  return { definition, destination: resolveDestination(definition, '', secret) };
}
